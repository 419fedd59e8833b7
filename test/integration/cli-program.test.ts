// The built CLI as an operator runs it: `node bin/tsbm.js ...`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tsbm.js');
const dir = mkdtempSync(join(tmpdir(), 'tsbm-cli-'));
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

function tsbm(args: string[], opts: { nodeArgs?: string[]; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [...(opts.nodeArgs ?? []), bin, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  // npm test builds first (tsc and the build's artifacts); compiling here again while other
  // test files run the built CLI would swap dist/ under them.
  if (!existsSync(join(root, 'dist/cli/main.js'))) throw new Error('run `npm run build` first');
  // A resolve hook that logs every module the CLI loads.
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(spec, ctx, next) {
  const r = await next(spec, ctx);
  appendFileSync(process.env.TSBM_LOAD_LOG, r.url + '\\n');
  return r;
}\n`,
  );
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function loadedModules(args: string[]): string[] {
  const log = join(dir, `load-${args.join('_').replace(/\W/g, '')}.log`);
  writeFileSync(log, '');
  const r = tsbm(args, { nodeArgs: ['--import', join(dir, 'register.mjs')], env: { TSBM_LOAD_LOG: log } });
  expect(r.code).toBe(0);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const HEAVY = ['/node_modules/ssh2/', '/node_modules/ajv', '/node_modules/handlebars/', '/node_modules/listr2/', '/node_modules/yaml/', '/node_modules/@sinclair/typebox/'];

describe('tsbm CLI', () => {
  it('--version prints the package version', () => {
    const r = tsbm(['--version']);
    expect(r).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('--version and --help load no heavy dependency (startup stays fast)', () => {
    for (const args of [['--version'], ['--help'], ['run', '--help']]) {
      const mods = loadedModules(args);
      expect(mods.length).toBeGreaterThan(0);
      for (const heavy of HEAVY) expect(mods.filter((m) => m.includes(heavy)), `${args.join(' ')} loaded ${heavy}`).toEqual([]);
    }
    // --version does not even need commander
    expect(loadedModules(['--version']).filter((m) => m.includes('/node_modules/'))).toEqual([]);
  });

  it('--help shows commands, global -v and examples', () => {
    const r = tsbm(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: tsbm/);
    expect(r.stdout).toMatch(/^\s+run \[options\] <playbook>/m);
    expect(r.stdout).toMatch(/^\s+modules/m);
    expect(r.stdout).toContain('-v, --verbose');
    expect(r.stdout).toContain('Examples:');
    const run = tsbm(['run', '--help']);
    for (const flag of ['--inventory', '--limit', '--tags', '--skip-tags', '--extra-vars', '--forks', '--check', '--diff', '--start-at-task', '--list-hosts', '--list-tasks', '--list-tags', '--syntax-check', '--output', '--junit', '--report']) {
      expect(run.stdout).toContain(flag);
    }
  });

  it.each([
    [['bogus'], /^tsbm: error: unknown command 'bogus'\n$/],
    [['run'], /^tsbm: error: missing required argument 'playbook'\n$/],
    [['run', 'p.yml', '--bogus'], /^tsbm: error: unknown option '--bogus'\n$/],
    [['run', 'p.yml', '--forks', '0'], /^tsbm: error: option .*--forks.* argument '0' is invalid\. must be a positive integer\.\n$/],
    [['run', 'p.yml', '--forks', 'many'], /is invalid/],
    [['run', 'p.yml', '--output', 'html'], /Allowed choices are tty, plain, json/],
    [['run', 'p.yml', '-i'], /argument missing/],
    [['run', 'p.yml', '-e', 'oops'], /^tsbm: error: bad --extra-vars \(4 characters, not shown\): a word has no =: it is not key=value/],
    [['modules', 'no_such_module'], /^tsbm: error: unknown module "no_such_module"/],
    [['run', 'p.yml', '--junit', '/nonexistent-dir/x.xml'], /^tsbm: error: --junit \/nonexistent-dir\/x\.xml: directory \/nonexistent-dir does not exist/],
    [['run', 'p.yml', '--chek'], /unknown option '--chek' \(Did you mean --check\?\)/],
  ])('usage error %j exits 5 with one line, no stack', (args, message) => {
    const r = tsbm(args);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('names file:line:col for a broken -e @file, exit 5', () => {
    writeFileSync(join(dir, 'vars.yml'), 'a: 1\n  b: 2\n');
    const r = tsbm(['run', 'p.yml', '-e', '@vars.yml']);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(new RegExp(`^tsbm: error: ${join(dir, 'vars.yml').replace(/[.]/g, '\\.')}:\\d+:\\d+: in --extra-vars @vars\\.yml: YAML`));
  });

  it('masks secret extra vars in error output', () => {
    // the playbook does not exist: whatever fails next must not echo the password
    const r = tsbm(['run', 'missing-playbook-hunter2pw.yml', '-e', 'bmc_password=hunter2pw']);
    expect(r.stdout + r.stderr).not.toContain('hunter2pw');
  });

  it('accepts -v/-vv/-vvv before and after the command', () => {
    expect(tsbm(['-vvv', 'modules']).code).toBe(0);
    expect(tsbm(['modules', '-vv']).code).toBe(0);
    expect(tsbm(['-v', '-v', 'modules', '--json']).code).toBe(0);
  });

  it('tsbm modules lists registered modules', () => {
    const r = tsbm(['modules']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^MODULE\s+RUNS ON\s+SUMMARY/);
  });
});
