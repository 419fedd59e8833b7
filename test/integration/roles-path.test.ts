// Roles from anywhere: a playbook in a repository of the operator's own (a temporary directory
// outside the checkout) uses the shipped roles by name, adds a step of its own in the ramdisk,
// and runs against the simulated lab through the built CLI. A role beside the playbook wins
// over a shipped one of the same name; --roles-path and TSBM_ROLES_PATH come between.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { type CliRun, runTsbm, stateArgs } from '../helpers/fault-cli.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();
let repo = '';
let lab: Lab;

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const state = stateArgs(repo);
  return runTsbm(args[0] === 'run' ? [...args, ...state.args] : args, { cwd: repo, env: { ...state.env, ...env }, timeoutMs: 120_000 });
}

const resultsOf = (r: CliRun, host: string) =>
  r.events.filter((e) => e.type === 'host_result' && e.host === host && e.item === undefined).map((e) => `${e.task} ${e.status}`);

beforeAll(async () => {
  repo = scratch('tsbm-own-repo-');
  lab = await startLab({ nodes: 1, dir: join(scratch('tsbm-roles-lab-'), 'lab'), bootDelayMs: 100, powerDelayMs: 20 });
  writeFileSync(
    join(repo, 'site.yml'),
    `# An operator's own flow from the shipped roles, with one step of its own in the ramdisk.
- name: My deploy steps
  hosts: all
  gather_facts: false
  roles:
    - power-off
  tasks:
    - import_role: {name: boot-ramdisk}
    - import_role: {name: wait-agent}
    - name: A step of my own in the ramdisk
      command: {argv: [uname, -n]}
    - import_role: {name: discover}
    - import_role: {name: my-extra}
`,
  );
  // a role of the operator's own, kept in a shared directory named by TSBM_ROLES_PATH / --roles-path
  const shared = join(repo, 'shared-roles', 'my-extra', 'tasks');
  mkdirSync(shared, { recursive: true });
  writeFileSync(join(shared, 'main.yml'), '- name: My extra step\n  debug: {msg: "root disk {{ root.device }}"}\n');
}, 60_000);

afterAll(async () => {
  await lab?.close();
});

describe('roles from anywhere', () => {
  it('a playbook outside the checkout runs the shipped roles by name, and a role from TSBM_ROLES_PATH', async () => {
    const r = await run(['run', 'site.yml', '-i', lab.inventory, '--output', 'json'], { TSBM_ROLES_PATH: join(repo, 'shared-roles') });
    expect(r.code, r.stderr + r.stdout.slice(-2000)).toBe(0);
    expect(resultsOf(r, 'node01')).toEqual([
      'Power the node off ok',
      'Insert the ramdisk ISO and boot once from it changed',
      'Power the node on changed',
      'Wait for the ramdisk and check it is this node ok',
      'A step of my own in the ramdisk changed',
      'Choose the root disk ok',
      'My extra step ok',
    ]);
    const extra = r.events.find((e) => e.task === 'My extra step' && e.type === 'host_result');
    expect(extra?.msg).toMatch(/^root disk \/dev\//);
  });

  it('--roles-path finds the same role; without either it is not found, and the message says where it looked', async () => {
    const ok = await run(['validate', 'site.yml', '--roles-path', join(repo, 'shared-roles')]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    const missing = await run(['validate', 'site.yml']);
    expect(missing.code).toBe(4);
    expect(missing.stdout).toMatch(/role "my-extra" not found/);
    expect(missing.stdout).toMatch(/looked in roles, .*playbooks\/roles/);
  });

  it('a role beside the playbook wins over the shipped one of the same name', async () => {
    const own = join(repo, 'roles', 'power-off', 'tasks');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'main.yml'), '- name: My own power-off\n  debug: {msg: mine}\n');
    try {
      const r = await run(['run', 'site.yml', '-i', lab.inventory, '--output', 'json', '--list-tasks'], { TSBM_ROLES_PATH: join(repo, 'shared-roles') });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('My own power-off');
      expect(r.stdout).not.toContain('Power the node off');
      expect(r.stdout).toContain('Insert the ramdisk ISO and boot once from it'); // still the shipped boot-ramdisk
    } finally {
      rmSync(join(repo, 'roles'), { recursive: true, force: true });
    }
  });
});
