// Ansible Vault through the built CLI, with vaults the real ansible-vault makes at test time:
// a vaulted group_vars file, `!vault` scalars (1.1 and 1.2 with a vault id) in the inventory and
// in vars_files, a vaulted -e @file; passwords from --vault-password-file, --vault-id, a script,
// the config file, TSBM_VAULT_PASSWORD_FILE and --ask-vault-pass (in a real terminal). The host
// gets the clear values; no output, journal, JUnit file or report holds them.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { scratchDirs } from '../helpers/scratch.js';
import { runCli } from '../helpers/tsbm-cli.js';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tsbm.js');
const scratch = scratchDirs();
const hasVault = spawnSync('ansible-vault', ['--version']).status === 0;
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

const SECRETS = {
  group: 'GroupVaulted-pw-81735',
  inventory: 'InvScalar-pw-55102',
  devFile: 'DevVarsFile-tok-40044',
  extra: 'ExtraVars-key-99871',
};

let dir: string;
let home: string;

const tsbm = (args: string[], env: NodeJS.ProcessEnv = {}, cwd = dir) => runCli(args, { cwd, home, env });

function vault(args: string[], input?: string): string {
  const r = spawnSync('ansible-vault', args, { cwd: dir, encoding: 'utf8', input, env: { PATH: process.env.PATH, HOME: home } });
  if (r.status !== 0) throw new Error(`ansible-vault ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Indents `ansible-vault encrypt_string` output to sit under a mapping key at `indent`. */
const indented = (block: string, indent: string) =>
  block
    .trimEnd()
    .split('\n')
    .map((l, i) => (i === 0 ? l : `${indent}${l.trimStart()}`))
    .join('\n');

function expectNoSecret(text: string, where: string): void {
  for (const s of Object.values(SECRETS)) expect(text.includes(s), `${s} in ${where}`).toBe(false);
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist/executor/run.js'))) throw new Error('run `npm run build` first');
  if (!hasVault) return;
  const base = scratch('tsbm-vaultcli-');
  dir = join(base, 'project');
  home = join(base, 'home');
  mkdirSync(join(dir, 'group_vars'), { recursive: true });
  mkdirSync(join(dir, 'out'));
  mkdirSync(home);
  writeFileSync(join(dir, 'pw.txt'), 'project vault pass\n');
  writeFileSync(join(dir, 'dev.txt'), 'dev vault pass\n');
  // group_vars/all.yml, wholly vaulted
  writeFileSync(join(dir, 'group_vars', 'all.yml'), `group_secret: ${SECRETS.group}\n`);
  vault(['encrypt', '--vault-password-file', 'pw.txt', 'group_vars/all.yml']);
  // a `!vault` scalar in the inventory (1.1, default id)
  const invScalar = vault(['encrypt_string', '--vault-password-file', 'pw.txt', SECRETS.inventory, '--name', 'inv_secret']);
  writeFileSync(
    join(dir, 'inventory.yml'),
    `all:\n  hosts:\n    alpha:\n      connection: local\n      ${indented(invScalar, '        ')}\n  vars:\n    plain_value: visible-value\n`,
  );
  // vars_files with a 1.2 scalar under vault id "dev"
  writeFileSync(join(dir, 'dev-vars.yml'), `${vault(['encrypt_string', '--vault-id', 'dev@dev.txt', SECRETS.devFile, '--name', 'dev_secret'])}\n`);
  // -e @extra.yml, wholly vaulted
  writeFileSync(join(dir, 'extra.yml'), `extra_secret: ${SECRETS.extra}\n`);
  vault(['encrypt', '--vault-password-file', 'pw.txt', 'extra.yml']);
  writeFileSync(
    join(dir, 'site.yml'),
    `- name: Uses every vaulted value
  hosts: all
  gather_facts: false
  vars_files: [dev-vars.yml]
  tasks:
    - name: Show them
      debug:
        msg: "{{ group_secret }} {{ inv_secret }} {{ dev_secret }} {{ extra_secret }} {{ plain_value }}"
    - name: Hand them to a command
      command: echo {{ group_secret }} {{ inv_secret }} {{ dev_secret }} {{ extra_secret }}
      register: echoed
    - name: Write what the host got
      copy:
        content: "{{ echoed.stdout }}"
        dest: "${join(dir, 'out', 'got.txt')}"
`,
  );
});

// Each test runs the CLI a few times: generous bounds, the CI machine is loaded (no timing is tested).
describe.skipIf(!hasVault)('vaulted values in a run (ansible-vault made them)', { timeout: 300_000 }, () => {
  const args = ['run', 'site.yml', '-i', 'inventory.yml', '-e', '@extra.yml'];

  it('without a password: an error before anything runs, naming the file and line of the vaulted value', () => {
    // -e @file is an option: its mistakes exit 5, as every other -e mistake
    const r = tsbm([...args, '--no-journal', '--output', 'plain']);
    expect(r.code).toBe(5);
    expect(r.all).toMatch(/extra\.yml:1:1: in --extra-vars @extra\.yml: the vaulted file needs a vault password, and none was given \(give the vault password with --vault-password-file/);
    const inv = tsbm(['run', 'site.yml', '-i', 'inventory.yml', '--no-journal', '--output', 'plain']);
    expect(inv.code).toBe(4);
    expect(inv.all).toMatch(/inventory\.yml:5:\d+: the vaulted value \(!vault\) needs a vault password/);
    writeFileSync(join(dir, 'plain-inventory.yml'), 'all:\n  hosts:\n    alpha:\n      connection: local\n');
    const group = tsbm(['run', 'site.yml', '-i', 'plain-inventory.yml', '--no-journal', '--output', 'plain']);
    expect(group.code).toBe(4);
    expect(group.all).toMatch(/group_vars\/all\.yml:1:1: the vaulted file needs a vault password/);
    expect(existsSync(join(dir, 'out', 'got.txt'))).toBe(false);
    const noDev = tsbm([...args, '--vault-password-file', 'pw.txt', '--no-journal', '--output', 'plain']);
    expect(noDev.code).toBe(4);
    expect(noDev.all).toMatch(/dev-vars\.yml:1:\d+: cannot decrypt the vaulted value \(!vault\): no vault password given opens it \(tried pw\.txt\)\. It was encrypted with vault id "dev"/);
  });

  it('with the passwords: the host gets the clear values; output, journal, JUnit and report hold none of them', () => {
    const r = tsbm([...args, '--vault-password-file', 'pw.txt', '--vault-id', 'dev@dev.txt', '--output', 'json', '-vvv', '--junit', 'junit.xml', '--report', 'report.html']);
    expect(r.code, r.all).toBe(0);
    expect(readFileSync(join(dir, 'out', 'got.txt'), 'utf8')).toBe(`${SECRETS.group} ${SECRETS.inventory} ${SECRETS.devFile} ${SECRETS.extra}`);
    expect(r.stdout).toContain('visible-value');
    expect(r.stdout).toContain('********');
    expectNoSecret(r.all, 'output');
    const journals = join(dir, '.tsbm', 'runs');
    for (const f of readdirSync(journals)) expectNoSecret(readFileSync(join(journals, f), 'utf8'), `journal ${f}`);
    expectNoSecret(readFileSync(join(dir, 'junit.xml'), 'utf8'), 'junit.xml');
    expectNoSecret(readFileSync(join(dir, 'report.html'), 'utf8'), 'report.html');
  });

  it('passwords from a script, from tsbm.cfg and from TSBM_VAULT_PASSWORD_FILE', () => {
    writeFileSync(join(dir, 'pass-script.sh'), '#!/bin/sh\necho "project vault pass"\n');
    chmodSync(join(dir, 'pass-script.sh'), 0o755);
    const dev = ['--vault-id', 'dev@dev.txt', '--no-journal', '--output', 'plain'];
    const script = tsbm([...args, '--vault-password-file', 'pass-script.sh', ...dev]);
    expect(script.code, script.all).toBe(0);
    const env = tsbm([...args, ...dev], { TSBM_VAULT_PASSWORD_FILE: 'pw.txt' });
    expect(env.code, env.all).toBe(0);
    const cfgDir = scratch('tsbm-vaultcfg-');
    writeFileSync(join(cfgDir, 'tsbm.cfg'), `[defaults]\nvault_password_file = ${join(dir, 'pw.txt')}\nvault_identity_list = dev@${join(dir, 'dev.txt')}\n`);
    const cfg = tsbm([...args, '--no-journal', '--output', 'plain'], { TSBM_CONFIG: join(cfgDir, 'tsbm.cfg') });
    expect(cfg.code, cfg.all).toBe(0);
    for (const r of [script, env, cfg]) expectNoSecret(r.all, 'output');
  });

  it('tsbm validate and tsbm inventory decrypt too, and mask what they show', () => {
    const v = tsbm(['validate', 'site.yml', '-i', 'inventory.yml', '-e', '@extra.yml', '--vault-password-file', 'pw.txt', '--vault-id', 'dev@dev.txt']);
    expect(v.code, v.all).toBe(0);
    const noPw = tsbm(['validate', 'site.yml', '-i', 'inventory.yml']);
    expect(noPw.code).toBe(4);
    expect(noPw.all).toMatch(/inventory\.yml:5:\d+: the vaulted value \(!vault\) needs a vault password/);
    const inv = tsbm(['inventory', '-i', 'inventory.yml', '--host', 'alpha', '--vault-password-file', 'pw.txt', '--playbook-dir', '.']);
    expect(inv.code, inv.all).toBe(0);
    expect(JSON.parse(inv.stdout)).toMatchObject({ inv_secret: '********', group_secret: '********', plain_value: 'visible-value' });
    expectNoSecret(inv.all, 'tsbm inventory');
  });

  it.skipIf(!hasTmux)('--ask-vault-pass asks on the terminal without echoing the password', async () => {
    const socket = `tsbm-vault-${process.pid}`;
    const tmux = (...a: string[]) => spawnSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' });
    const screen = () => tmux('capture-pane', '-p', '-t', 'v').stdout;
    const until = async (pred: (s: string) => boolean) => {
      for (let i = 0; i < 150 && !pred(screen()); i++) await new Promise((r) => setTimeout(r, 100));
      return screen();
    };
    const cmd = `cd ${dir} && HOME=${home} NO_COLOR=1 ${process.execPath} ${bin} run site.yml -i inventory.yml -e @extra.yml --vault-id dev@dev.txt --ask-vault-pass --no-journal --output plain; echo EXIT=$?; sleep 60`;
    tmux('new-session', '-d', '-s', 'v', '-x', '150', '-y', '50', cmd);
    try {
      expect(await until((s) => s.includes('Vault password:'))).toContain('Vault password:');
      tmux('send-keys', '-t', 'v', '-l', 'project vault pass');
      tmux('send-keys', '-t', 'v', 'Enter');
      const end = await until((s) => s.includes('EXIT='));
      expect(end).toContain('EXIT=0');
      expect(end).not.toContain('project vault pass');
      expectNoSecret(end, 'terminal');
    } finally {
      tmux('kill-server');
    }
  });
});

if (!hasVault) it.skip('vault CLI tests: SKIPPED because ansible-vault is not installed (.ci/setup.sh installs ansible-core)', () => {});
