// No secret at rest: a deploy on a simulated node with secrets supplied every way tsbm takes
// them (-e k=v, -e @file, -e '{json}', the `env` helper, the `secret` helper, the inventory),
// run with plain and JSON output, JUnit, and a --resume that is given the inline values again;
// then every file those runs wrote (journals, locks, JUnit, saved output, what the node was
// left with) is searched for every secret, in clear and in base64.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Lab } from '../../packages/lab/src/lab/lab.js';
import { type CliRun, DEPLOY, runTsbm } from '../helpers/fault-cli.js';
import { startSecretLab } from '../helpers/secret-lab.js';

let lab: Lab;
let root = '';
let work = '';
let before = new Map<string, number>();
const secrets: Record<string, string> = {};

beforeAll(async () => {
  const s = await startSecretLab('tsbm-secrets-at-rest-');
  ({ lab, root, work } = s);
  const { inventory: labInv, node, driverInfo: di } = s;
  // The lab's BMC password and registry credentials are real: the deploy only works if they arrive.
  secrets.cli = String(di.redfish_password); // -e bmc_pw=...
  secrets.file = String(labInv.all.vars.instance_info.image_pull_secret); // -e @secrets.yml
  secrets.json = `json-${Math.random().toString(36).slice(2)}-api`; // -e '{"api": ...}', marked by the secret helper
  secrets.env = `env-${Math.random().toString(36).slice(2)}-token`; // {{ env 'TSBM_TEST_AT_REST' }}
  secrets.inventory = `inv-${Math.random().toString(36).slice(2)}-password`; // inventory var with a secret name
  node.driver_info = { ...di, redfish_password: '{{ bmc_pw }}' };
  node.ipmi_password = secrets.inventory;
  labInv.all.vars.instance_info = { ...labInv.all.vars.instance_info, image_pull_secret: '{{ pull_auth }}' };
  writeFileSync(join(work, 'inventory.yml'), stringify(labInv));
  writeFileSync(join(work, 'secrets.yml'), `pull_auth: ${secrets.file}\n`);
  writeFileSync(
    join(work, 'site.yml'),
    `- import_playbook: ${DEPLOY}
- name: Use the other secrets
  hosts: all
  gather_facts: false
  vars:
    env_token: "{{ env 'TSBM_TEST_AT_REST' }}"
  tasks:
    - name: Show them masked
      debug:
        msg: "api {{ secret api }} env {{ env_token }} inventory {{ ipmi_password }} bmc {{ driver_info.redfish_password }}"
      register: shown
    - name: Keep one
      set_fact:
        kept_token: "{{ env_token }}"
`,
  );
}, 120_000);
afterAll(async () => {
  await lab?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const env = () => ({ ...process.env, TSBM_TEST_AT_REST: secrets.env, TSBM_LOCK_DIR: join(work, 'locks') });
const inline = () => ['-e', `bmc_pw=${secrets.cli}`, '-e', JSON.stringify({ api: secrets.json })];
const run = (args: string[]): Promise<CliRun> =>
  runTsbm(['run', 'site.yml', '-i', 'inventory.yml', '--journal-dir', join(work, 'runs'), ...args], { cwd: work, env: env(), timeoutMs: 180_000 });

/** Every file under `dir` with its modification time. */
function files(dir: string, out = new Map<string, number>()): Map<string, number> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) files(p, out);
    else if (st.isFile()) out.set(p, st.mtimeMs);
  }
  return out;
}

/** Files under `dir` that are new or changed since `before`, but those in `skip`. */
function writtenFiles(dir: string, skip: Set<string>): string[] {
  return [...files(dir)].filter(([p, m]) => before.get(p) !== m && !skip.has(p)).map(([p]) => p);
}

describe('no secret at rest', () => {
  it('a deploy, its JSON twin and a resume leave no secret in any file they wrote or printed', async () => {
    // What the lab wrote before the runs (its own inventory, its registry's credentials) is not theirs.
    before = files(root);
    const plain = await run([...inline(), '-e', '@secrets.yml', '--output', 'plain', '--junit', 'plain.xml']);
    expect(plain.code, plain.stderr + plain.stdout.slice(-2000)).toBe(0);
    expect(plain.stdout).toMatch(/api \*{8} env \*{8} inventory \*{8} bmc \*{8}/);
    writeFileSync(join(work, 'plain.out'), plain.stdout + plain.stderr);

    // The node is active since the first deploy: a second deploy asks for --rebuild, as an operator must.
    const json = await run([...inline(), '-e', '@secrets.yml', '--rebuild', '--output', 'json', '--junit', 'json.xml']);
    expect(json.code, json.stderr).toBe(0);
    const start = json.events.find((e) => e.type === 'run_start');
    expect(start?.options).toMatchObject({ extraVars: ['bmc_pw', 'api', 'pull_auth'] });
    writeFileSync(join(work, 'json.out'), json.stdout + json.stderr);

    // A resume needs the inline values again (the file is read again by itself).
    const refused = await run(['--resume', 'last', '--output', 'json']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(/needs the values of api, bmc_pw again/);
    writeFileSync(join(work, 'refused.out'), refused.stdout + refused.stderr);
    const resumed = await run([...inline(), '--resume', 'last', '--output', 'json', '--junit', 'resumed.xml']);
    expect(resumed.code, resumed.stderr).toBe(0);
    writeFileSync(join(work, 'resumed.out'), resumed.stdout + resumed.stderr);

    const inputs = new Set(['inventory.yml', 'secrets.yml', 'site.yml'].map((f) => join(work, f)));
    // The node's 20 GiB sparse disk is not read whole: its config drive is read through the
    // files the instance sees (nodes/*/instance/mnt/config).
    const disk = join(lab.dir, 'nodes', 'node01', 'root', 'dev', 'vda');
    const written = [...writtenFiles(work, inputs), ...writtenFiles(join(lab.dir, 'nodes'), new Set([disk]))];
    const names = written.map((f) => f.slice(root.length + 1));
    // What the runs wrote: three journals (the refused resume wrote none), JUnit, the output; on the node, its disk and files.
    expect(names.filter((n) => n.startsWith('work/runs/')).length).toBe(3);
    expect(names).toEqual(expect.arrayContaining(['work/plain.xml', 'work/json.xml', 'work/resumed.xml']));
    expect(names.some((n) => n.endsWith('instance/mnt/config/openstack/latest/meta_data.json'))).toBe(true);
    const leaks: string[] = [];
    for (const f of written) {
      const bytes = readFileSync(f);
      for (const [how, value] of Object.entries(secrets)) {
        for (const form of [value, Buffer.from(value).toString('base64')]) {
          if (bytes.includes(form)) leaks.push(`${f.slice(root.length + 1)}: the ${how} secret${form === value ? '' : ' (base64)'}`);
        }
      }
    }
    expect(leaks).toEqual([]);
  }, 300_000);
});
