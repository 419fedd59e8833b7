// Executable inventories (Ansible's script protocol) with real scripts: --list with _meta,
// --list then --host per host without it, merged with YAML inventories and group_vars/;
// failing, hanging (a forked helper included), silent and garbled scripts are one clear error.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { loadInventories } from '../../src/inventory/load.js';
import { isInventoryScript } from '../../src/inventory/script.js';
import { inventoryVarsFor as hostVars } from '../../src/inventory/vars.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();
const ROOT = resolve(import.meta.dirname, '..', '..');

/** An executable node script that logs its arguments to calls.log and runs `body`. */
function script(dir: string, name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `#!/usr/bin/env node
require('node:fs').appendFileSync(${JSON.stringify(join(dir, 'calls.log'))}, process.argv.slice(2).join(' ') + '\\n');
const args = process.argv.slice(2);
${body}
`,
  );
  chmodSync(file, 0o755);
  return file;
}
const calls = (dir: string) => readFileSync(join(dir, 'calls.log'), 'utf8').trim().split('\n');

const LIST = {
  rack1: { hosts: ['node01', 'node02'], vars: { rack: 'r1' } },
  rack2: ['node03'],
  baremetal: { children: ['rack1', 'rack2'], vars: { driver_info: { redfish_username: 'admin' } } },
};
const HOSTVARS = {
  node01: { ansible_host: '10.0.0.11', driver_info: { redfish_address: 'https://10.0.1.11' } },
  node02: { ansible_host: '10.0.0.12' },
  node03: { ansible_host: '10.0.0.13' },
};

function errorOf(fn: () => unknown): TsbmError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TsbmError);
    return e as TsbmError;
  }
  throw new Error('expected an error');
}

const savedTimeout = process.env.TSBM_INVENTORY_SCRIPT_TIMEOUT;
afterEach(() => {
  if (savedTimeout === undefined) delete process.env.TSBM_INVENTORY_SCRIPT_TIMEOUT;
  else process.env.TSBM_INVENTORY_SCRIPT_TIMEOUT = savedTimeout;
});

describe('executable inventories', () => {
  it('with _meta: one --list call; groups, children, group and host vars; group_vars/ beside it apply', () => {
    const dir = scratch('tsbm-invscript-');
    const inv = script(dir, 'nodes.js', `process.stdout.write(JSON.stringify(${JSON.stringify({ ...LIST, _meta: { hostvars: HOSTVARS } })}));`);
    mkdirSync(join(dir, 'group_vars'));
    writeFileSync(join(dir, 'group_vars', 'rack2.yml'), 'ssh_user: core\n');
    const yaml = join(dir, 'extra.yml');
    writeFileSync(yaml, 'all:\n  children:\n    rack2:\n      hosts:\n        node04:\n          ansible_host: 10.0.0.14\n');
    const loaded = loadInventories([inv, yaml]);
    expect(calls(dir)).toEqual(['--list']);
    expect([...loaded.hosts.keys()].sort()).toEqual(['node01', 'node02', 'node03', 'node04']);
    expect(loaded.groups.get('baremetal')!.children).toEqual(['rack1', 'rack2']);
    expect(loaded.groups.get('rack2')!.hosts).toEqual(['node03', 'node04']);
    const v1 = hostVars(loaded, 'node01');
    expect(v1).toMatchObject({ ansible_host: '10.0.0.11', rack: 'r1', driver_info: { redfish_address: 'https://10.0.1.11' } });
    expect(hostVars(loaded, 'node03')).toMatchObject({ ssh_user: 'core', driver_info: { redfish_username: 'admin' } });
    expect(hostVars(loaded, 'node04')).toMatchObject({ ssh_user: 'core', ansible_host: '10.0.0.14' });
    expect(loaded.sources).toEqual([inv, yaml]);
  });

  it('without _meta: --list, then --host NAME once per host', () => {
    const dir = scratch('tsbm-invscript-');
    const inv = script(
      dir,
      'nodes.js',
      `const hv = ${JSON.stringify(HOSTVARS)};
if (args[0] === '--list') process.stdout.write(JSON.stringify(${JSON.stringify(LIST)}));
else if (args[0] === '--host') process.stdout.write(args[1] === 'node02' ? '' : JSON.stringify(hv[args[1]]));
else process.exit(9);`,
    );
    const loaded = loadInventories([inv]);
    expect(calls(dir).sort()).toEqual(['--host node01', '--host node02', '--host node03', '--list']);
    expect(hostVars(loaded, 'node01')).toMatchObject({ ansible_host: '10.0.0.11', rack: 'r1' });
    expect(hostVars(loaded, 'node02')).toMatchObject({ rack: 'r1' }); // empty --host output: no vars
    expect(hostVars(loaded, 'node02').ansible_host).toBeUndefined();
  });

  it('a failing script: exit code and the end of its stderr, and what to try', () => {
    const dir = scratch('tsbm-invscript-');
    const inv = script(dir, 'nodes.js', `console.error('connecting to netbox...'); console.error('Error: 401 Unauthorized'); process.exit(3);`);
    const e = errorOf(() => loadInventories([inv]));
    expect(e.exitCode).toBe(4);
    expect(e.oneLine()).toBe(
      `inventory script ${inv} --list exited with code 3; its stderr ends: connecting to netbox... | Error: 401 Unauthorized (run it by hand to see why: ${inv} --list)`,
    );
  });

  it('a failing --host call names the host', () => {
    const dir = scratch('tsbm-invscript-');
    const inv = script(dir, 'nodes.js', `if (args[0] === '--list') console.log('{"all": {"hosts": ["a", "b"]}}'); else if (args[1] === 'b') { console.error('no such host'); process.exit(1); } else console.log('{}');`);
    expect(errorOf(() => loadInventories([inv])).message).toBe(`inventory script ${inv} --host b exited with code 1; its stderr ends: no such host`);
  });

  it('a hanging script is stopped at the time limit, with the helper it forked', () => {
    const dir = scratch('tsbm-invscript-');
    const pidFile = join(dir, 'helper.pid');
    // A shell script: it forks its helper and says what it waits for within milliseconds, so
    // the time limit is reached after both, however slowly a loaded machine starts node.
    const inv = join(dir, 'nodes.sh');
    writeFileSync(inv, `#!/bin/sh\nsleep 300 &\necho $! > ${pidFile}\necho 'waiting for the CMDB' >&2\nwait\n`);
    chmodSync(inv, 0o755);
    process.env.TSBM_INVENTORY_SCRIPT_TIMEOUT = '2';
    const e = errorOf(() => loadInventories([inv]));
    expect(e.message).toBe(`inventory script ${inv} --list did not finish within 2 s and was stopped; its stderr ends: waiting for the CMDB`);
    expect(e.hint).toMatch(/TSBM_INVENTORY_SCRIPT_TIMEOUT=SECONDS/);
    // the forked sleep went with it (its exit may take a moment to be reaped)
    const helper = Number(readFileSync(pidFile, 'utf8'));
    const gone = () => {
      try {
        process.kill(helper, 0);
        return readFileSync(`/proc/${helper}/stat`, 'utf8').split(' ')[2] === 'Z';
      } catch {
        return true;
      }
    };
    const until = Date.now() + 5000;
    while (!gone() && Date.now() < until) spawnSync('sleep', ['0.1']);
    expect(gone()).toBe(true);
  });

  it('output that is not an inventory: not JSON (line and column), not an object, bad groups', () => {
    const dir = scratch('tsbm-invscript-');
    const notJson = script(dir, 'a.js', `console.log('Loading...'); console.log('{"all": {}}');`);
    expect(errorOf(() => loadInventories([notJson])).oneLine()).toMatch(
      /printed something that is not JSON( at line 1 column 1)? \(it starts: "Loading\.\.\. \{\\"all\\": \{\}\}"\) \(an inventory script prints one JSON object on stdout; send messages to stderr\)$/,
    );
    const list = script(dir, 'b.js', `console.log('["node01"]');`);
    expect(errorOf(() => loadInventories([list])).message).toMatch(/--list must print a JSON object of groups, found a list/);
    const badHosts = script(dir, 'c.js', `console.log(JSON.stringify({ rack1: { hosts: 'node01' } }));`);
    expect(errorOf(() => loadInventories([badHosts])).message).toBe(`inventory script ${badHosts} --list: group "rack1" has "hosts" that is not a list of host names`);
  });

  it('a script whose interpreter is missing cannot start: said so', () => {
    const dir = scratch('tsbm-invscript-');
    const file = join(dir, 'nodes.py');
    writeFileSync(file, '#!/nonexistent/python9\nprint("{}")\n');
    chmodSync(file, 0o755);
    const e = errorOf(() => loadInventories([file]));
    expect(e.message).toMatch(new RegExp(`^cannot run inventory script ${file.replace(/[.]/g, '\\.')} --list: spawn .* ENOENT`));
    expect(e.hint).toMatch(/#! line/);
  });

  it('only executables that start with #! (or ELF) are run; an executable YAML file is read as YAML', () => {
    const dir = scratch('tsbm-invscript-');
    const yaml = join(dir, 'inv.yml');
    writeFileSync(yaml, 'all:\n  hosts:\n    x:\n');
    chmodSync(yaml, 0o755);
    expect(isInventoryScript(yaml)).toBe(false);
    expect([...loadInventories([yaml]).hosts.keys()]).toEqual(['x']);
    expect(isInventoryScript('/bin/true')).toBe(true);
    const plain = join(dir, 'nodes.js');
    writeFileSync(plain, '#!/usr/bin/env node\n');
    expect(isInventoryScript(plain)).toBe(false); // not executable
  });

  it('a script that lost its x bit is said to be one, with the chmod to run, not a YAML syntax error', () => {
    const dir = scratch('tsbm-invscript-');
    const file = join(dir, 'nodes.py');
    writeFileSync(file, '#!/usr/bin/env python3\nimport json\nprint(json.dumps({"all": {"hosts": ["a"]}}))\n');
    chmodSync(file, 0o644);
    const e = errorOf(() => loadInventories([file]));
    expect(e.message).toBe(`inventory ${file} starts with a #! line but is not executable, so it can be neither run as an inventory script nor read as YAML`);
    expect(e.hint).toBe(`make it executable: chmod +x ${file}`);
    // A YAML inventory whose first comment happens to start with #! is still YAML.
    const yaml = join(dir, 'inv.yml');
    writeFileSync(yaml, '#! generated by a tool\nall:\n  hosts:\n    x:\n');
    expect([...loadInventories([yaml]).hosts.keys()]).toEqual(['x']);
  });

  it('a directory: its YAML files and its scripts, in name order', () => {
    const dir = scratch('tsbm-invscript-');
    const invDir = join(dir, 'inventory');
    mkdirSync(invDir);
    writeFileSync(join(invDir, '10-static.yml'), 'all:\n  hosts:\n    static01:\n      rack: a\n');
    script(invDir, '20-dynamic', `console.log(JSON.stringify({ dyn: ['dyn01'], _meta: { hostvars: { dyn01: { rack: 'b' } } } }));`);
    writeFileSync(join(invDir, 'README.md'), 'not an inventory\n');
    const loaded = loadInventories([invDir]);
    expect([...loaded.hosts.keys()]).toEqual(['static01', 'dyn01']);
    expect(hostVars(loaded, 'dyn01')).toMatchObject({ rack: 'b' });
  });

  it('a bad time limit setting is an error, not a silent default', () => {
    const dir = scratch('tsbm-invscript-');
    const inv = script(dir, 'nodes.js', `console.log('{}');`);
    process.env.TSBM_INVENTORY_SCRIPT_TIMEOUT = 'soon';
    expect(errorOf(() => loadInventories([inv])).message).toBe('TSBM_INVENTORY_SCRIPT_TIMEOUT="soon" is not a number of seconds');
  });

  it('through the CLI: tsbm inventory --list and tsbm run on hosts a script names', () => {
    const dir = scratch('tsbm-invscript-');
    script(dir, 'nodes.js', `console.log(JSON.stringify({ all: { hosts: ['alpha', 'beta'], vars: { connection: 'local', greeting: 'hi' } }, _meta: { hostvars: { beta: { greeting: 'hello' } } } }));`);
    writeFileSync(join(dir, 'site.yml'), '- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Greet\n      debug:\n        msg: "{{ greeting }} from {{ inventory_hostname }}"\n');
    const tsbm = (args: string[]) =>
      spawnSync(process.execPath, [join(ROOT, 'bin/tsbm.js'), ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    const list = tsbm(['inventory', '-i', './nodes.js', '--list']);
    expect(list.status, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)._meta.hostvars.beta).toMatchObject({ greeting: 'hello', connection: 'local' });
    const run = tsbm(['run', 'site.yml', '-i', './nodes.js', '--output', 'plain', '-v', '--no-journal']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/hi from alpha/);
    expect(run.stdout).toMatch(/hello from beta/);
    expect(existsSync(join(dir, '.tsbm'))).toBe(false);
    // validate takes the same inventories (its --help says so): variables checked per scripted host.
    const ok = tsbm(['validate', 'site.yml', '-i', './nodes.js']);
    expect(ok.status, ok.stderr).toBe(0);
    writeFileSync(join(dir, 'bad.yml'), '- hosts: all\n  gather_facts: false\n  tasks:\n    - debug:\n        msg: "{{ farewell }}"\n');
    const bad = tsbm(['validate', 'bad.yml', '-i', './nodes.js']);
    expect(bad.status).toBe(4);
    expect(bad.stdout).toMatch(/bad\.yml:5:\d+: undefined variable "farewell" in task debug for hosts alpha, beta/);
    expect(tsbm(['validate', '--help']).stdout).toMatch(/executable\s+scripts/);
  });
});
