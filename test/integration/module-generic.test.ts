import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSsh, type SshConnection } from '../../src/connection/ssh.js';
import { commandModule } from '../../src/modules/commands/command.js';
import { copyModule } from '../../src/modules/files/copy.js';
import { factsModule } from '../../src/modules/facts/facts.js';
import { gatherFactsModule } from '../../src/modules/facts/gather_facts.js';
import { fileModule } from '../../src/modules/files/file.js';
import { getModule } from '../../src/modules/registry.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { shellModule } from '../../src/modules/commands/shell.js';
import { slurpModule } from '../../src/modules/files/slurp.js';
import { statModule } from '../../src/modules/files/stat.js';
import { templateModule } from '../../src/modules/files/template.js';
import { waitForModule } from '../../src/modules/flow/wait_for.js';
import { waitForConnectionModule } from '../../src/modules/flow/wait_for_connection.js';
import type { ModuleDef } from '../../src/module-api/types.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';
import { runModule, testContext } from '../helpers/ssh-module-context.js';

let h: SshHost;
let conn: SshConnection;
let dir: string;
const run = <S extends TSchema>(def: ModuleDef<S>, args: Record<string, unknown>, o: Parameters<typeof testContext>[1] = {}) =>
  runModule(def, testContext(conn, o).ctx, args);

beforeAll(async () => {
  h = await startSshHost();
  conn = await openSsh(h.spec);
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-mod-'));
});
afterAll(async () => {
  await conn?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('registry', () => {
  it('registers every generic module, with gather_facts as an alias of facts', () => {
    for (const n of ['command', 'shell', 'copy', 'template', 'file', 'stat', 'slurp', 'wait_for', 'wait_for_connection', 'facts', 'gather_facts']) {
      const m = getModule(n);
      expect(m, n).toBeDefined();
      expect(m!.example.length).toBeGreaterThan(10);
    }
    expect(getModule('gather_facts')!.run).toBeDefined();
  });

  it("every module's documented example loads as a valid task", () => {
    for (const n of ['command', 'shell', 'copy', 'template', 'file', 'stat', 'slurp', 'wait_for', 'wait_for_connection', 'facts', 'gather_facts']) {
      const m = getModule(n)!;
      const file = path.join(dir, `example-${n}.yml`);
      const body = m.example.split('\n').map((l) => `    ${l}`).join('\n');
      writeFileSync(file, `- hosts: all\n  vars:\n    image: x\n  tasks:\n${body}\n`);
      expect(() => loadPlaybook(file), n).not.toThrow();
    }
  });
});

describe('command', () => {
  it('splits a string without a shell and registers rc/stdout/stderr/stdout_lines', async () => {
    const r = await run(commandModule, { cmd: `printf '%s\\n' "a b" 'c$HOME' d` });
    expect(r).toMatchObject({ changed: true, rc: 0, stdout: 'a b\nc$HOME\nd', stdout_lines: ['a b', 'c$HOME', 'd'] });
    expect(h.commands.at(-1)).toBe(`printf '%s\\n' 'a b' 'c$HOME' d`);
  });
  it('takes argv, fails on non-zero rc, honours chdir and stdin', async () => {
    const r = await run(commandModule, { argv: ['sh', '-c', 'pwd; cat; exit 4'], chdir: dir, stdin: 'in' });
    expect(r).toMatchObject({ failed: true, rc: 4, stdout_lines: [dir, 'in'] });
  });
  it('creates/removes skip without running', async () => {
    const marker = path.join(dir, 'marker');
    writeFileSync(marker, '');
    const before = h.commands.length;
    const r = await run(commandModule, { cmd: 'touch /should-not-run', creates: marker });
    expect(r).toMatchObject({ changed: false, msg: expect.stringContaining('exists') });
    expect(h.commands.slice(before).some((c) => c.includes('should-not-run'))).toBe(false);
    const r2 = await run(commandModule, { cmd: 'true', removes: path.join(dir, 'absent') });
    expect(r2.changed).toBe(false);
  });
  it('does not run in check mode', async () => {
    const r = await run(commandModule, { cmd: `touch ${dir}/checked` }, { check: true });
    expect(r.skipped).toBe(true);
    expect(existsSync(path.join(dir, 'checked'))).toBe(false);
  });
  it('rejects unbalanced quotes clearly', async () => {
    await expect(run(commandModule, { cmd: `echo 'oops` })).rejects.toThrow(/unterminated single quote/);
  });
});

describe('shell', () => {
  it('runs through sh (pipes, variables)', async () => {
    const r = await run(shellModule, { cmd: 'echo $((2+3)) | tr 5 X' });
    expect(r).toMatchObject({ rc: 0, stdout: 'X', changed: true });
  });
});

describe('copy', () => {
  it('writes content with mode, is idempotent by checksum, and fixes mode alone', async () => {
    const dest = path.join(dir, 'copy.txt');
    const r1 = await run(copyModule, { content: 'hello\n', dest, mode: '0640' });
    expect(r1.changed).toBe(true);
    expect(readFileSync(dest, 'utf8')).toBe('hello\n');
    expect(statSync(dest).mode & 0o777).toBe(0o640);
    const puts = h.commands.length;
    const r2 = await run(copyModule, { content: 'hello\n', dest, mode: '0640' });
    expect(r2.changed).toBe(false);
    expect(r2.checksum).toBe(r1.checksum);
    expect(h.commands.length - puts).toBe(1); // one stat+sha256 probe, nothing else
    const r3 = await run(copyModule, { content: 'hello\n', dest, mode: 644 });
    expect(r3.changed).toBe(true);
    expect(statSync(dest).mode & 0o777).toBe(0o644);
  });
  it('gives a before/after diff and writes nothing in check mode', async () => {
    const dest = path.join(dir, 'diff.txt');
    writeFileSync(dest, 'old\n');
    const r = await run(copyModule, { content: 'new\n', dest }, { check: true, diff: true });
    expect(r.changed).toBe(true);
    expect(r.diff).toEqual({ before: 'old\n', after: 'new\n', path: dest });
    expect(readFileSync(dest, 'utf8')).toBe('old\n');
  });
  it('copies a controller src from the playbook files/ dir into a directory dest', async () => {
    const pb = mkdtempSync(path.join(dir, 'pb-'));
    mkdirSync(path.join(pb, 'files'));
    writeFileSync(path.join(pb, 'files', 'agent.conf'), 'x=1\n');
    const out = mkdtempSync(path.join(dir, 'out-'));
    const r = await run(copyModule, { src: 'agent.conf', dest: `${out}/` }, { playbookDir: pb });
    expect(r).toMatchObject({ changed: true, dest: path.join(out, 'agent.conf') });
    expect(readFileSync(path.join(out, 'agent.conf'), 'utf8')).toBe('x=1\n');
    await expect(run(copyModule, { src: 'missing.conf', dest: out }, { playbookDir: pb })).rejects.toThrow(/not found on the controller/);
  });
  it('needs exactly one of content and src', async () => {
    await expect(run(copyModule, { dest: '/tmp/x' })).rejects.toThrow(/exactly one of content and src/);
  });
});

describe('template', () => {
  it('renders a Handlebars file with the vars and is idempotent', async () => {
    const pb = mkdtempSync(path.join(dir, 'tpl-'));
    mkdirSync(path.join(pb, 'templates'));
    writeFileSync(path.join(pb, 'templates', 'motd.hbs'), 'node {{ name }} has {{ disks.length }} disks\n');
    const dest = path.join(dir, 'motd');
    const vars = { name: 'n1', disks: [1, 2] };
    const r1 = await run(templateModule, { src: 'motd.hbs', dest }, { playbookDir: pb, vars });
    expect(r1.changed).toBe(true);
    expect(readFileSync(dest, 'utf8')).toBe('node n1 has 2 disks\n');
    const r2 = await run(templateModule, { src: 'motd.hbs', dest }, { playbookDir: pb, vars });
    expect(r2.changed).toBe(false);
    const r3 = await run(templateModule, { src: 'motd.hbs', dest }, { playbookDir: pb, vars: { name: 'n2', disks: [] }, diff: true });
    expect(r3.diff).toMatchObject({ before: 'node n1 has 2 disks\n', after: 'node n2 has 0 disks\n' });
  });
  it('fails on an undefined variable', async () => {
    const pb = mkdtempSync(path.join(dir, 'tpl-'));
    writeFileSync(path.join(pb, 'bad.hbs'), '{{ nope }}');
    await expect(run(templateModule, { src: 'bad.hbs', dest: path.join(dir, 'bad') }, { playbookDir: pb })).rejects.toThrow(/nope/);
  });
});

describe('file', () => {
  it('creates a directory with mode, idempotently; removes it; touches a file', async () => {
    const d = path.join(dir, 'a/b/c');
    expect((await run(fileModule, { path: d, state: 'directory', mode: '0700' })).changed).toBe(true);
    expect(statSync(d).isDirectory()).toBe(true);
    expect(statSync(d).mode & 0o777).toBe(0o700);
    expect((await run(fileModule, { path: d, state: 'directory', mode: '0700' })).changed).toBe(false);
    expect((await run(fileModule, { path: d, state: 'directory', mode: '0755' })).changed).toBe(true);
    const t = path.join(d, 'touched');
    expect((await run(fileModule, { path: t, state: 'touch' })).changed).toBe(true);
    expect(existsSync(t)).toBe(true);
    expect((await run(fileModule, { path: t, mode: '0600' })).changed).toBe(true);
    expect(statSync(t).mode & 0o777).toBe(0o600);
    expect((await run(fileModule, { path: t, mode: '0600' })).changed).toBe(false);
    expect((await run(fileModule, { path: path.join(dir, 'a'), state: 'absent' })).changed).toBe(true);
    expect(existsSync(path.join(dir, 'a'))).toBe(false);
    expect((await run(fileModule, { path: path.join(dir, 'a'), state: 'absent' })).changed).toBe(false);
  });
  it('check mode changes nothing; state=file on a missing path fails with a hint', async () => {
    const d = path.join(dir, 'checkdir');
    expect((await run(fileModule, { path: d, state: 'directory' }, { check: true })).changed).toBe(true);
    expect(existsSync(d)).toBe(false);
    await expect(run(fileModule, { path: d })).rejects.toThrow(/does not exist/);
  });
});

describe('stat and slurp', () => {
  it('stat reports type, mode, size, checksum; absent paths exist: false', async () => {
    const f = path.join(dir, 'st.txt');
    writeFileSync(f, 'abc');
    chmodSync(f, 0o604);
    const r = await run(statModule, { path: f });
    expect(r.changed).toBe(false);
    expect(r.stat).toMatchObject({
      exists: true,
      isreg: true,
      isdir: false,
      mode: '0604',
      size: 3,
      checksum: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    });
    expect((await run(statModule, { path: dir })).stat).toMatchObject({ isdir: true });
    expect((await run(statModule, { path: path.join(dir, 'none') })).stat).toEqual({ exists: false, path: path.join(dir, 'none') });
  });
  it('slurp returns base64 content', async () => {
    const f = path.join(dir, 'sl.bin');
    writeFileSync(f, Buffer.from([0, 1, 2, 255]));
    const r = await run(slurpModule, { src: f });
    expect(r).toMatchObject({ changed: false, encoding: 'base64', content: 'AAEC/w==' });
  });
});

describe('wait_for', () => {
  it('waits for a port to open, reporting progress', async () => {
    const srv = net.createServer((s) => s.destroy());
    const probePort = await new Promise<number>((r) => {
      const tmp = net.createServer();
      tmp.listen(0, '127.0.0.1', () => {
        const p = (tmp.address() as net.AddressInfo).port;
        tmp.close(() => r(p));
      });
    });
    setTimeout(() => srv.listen(probePort, '127.0.0.1'), 700);
    const tc = testContext(conn);
    const r = await runModule(waitForModule, tc.ctx, { port: probePort, timeout: 10, sleep: 0.2 });
    srv.close();
    expect(r.failed).toBeUndefined();
    expect(tc.progress.length).toBeGreaterThan(0);
    expect(tc.progress[0]!.message).toMatch(/waiting for port 127.0.0.1:\d+ to be open/);
  });
  it('times out with failed and a message', async () => {
    const r = await run(waitForModule, { port: 1, timeout: 0.5, sleep: 0.2 });
    expect(r).toMatchObject({ failed: true, msg: expect.stringMatching(/timeout.*port 127.0.0.1:1/) });
  });
  it('waits for a path and for a regex in a file, returning match groups', async () => {
    const f = path.join(dir, 'log.txt');
    writeFileSync(f, 'starting\n');
    setTimeout(() => writeFileSync(f, 'starting\ninstall complete rc=0\n'), 500);
    const r = await run(waitForModule, { path: f, search_regex: 'install complete rc=(\\d+)', timeout: 10, sleep: 0.2 });
    expect(r).toMatchObject({ changed: false, match_groups: ['0'] });
    const gone = path.join(dir, 'gone');
    writeFileSync(gone, '');
    setTimeout(() => rmSync(gone), 300);
    expect((await run(waitForModule, { path: gone, state: 'absent', timeout: 10, sleep: 0.1 })).failed).toBeUndefined();
  });
});

describe('wait_for_connection', () => {
  it('succeeds once the host answers and fails after timeout when it does not', async () => {
    const ok = await run(waitForConnectionModule, { timeout: 5, sleep: 0.1 }, { connect: () => openSsh(h.spec) });
    expect(ok.failed).toBeUndefined();
    const bad = await run(waitForConnectionModule, { timeout: 0.6, sleep: 0.2, connect_timeout: 0.5 }, {
      connect: () => openSsh({ ...h.spec, port: 1 }),
    });
    expect(bad).toMatchObject({ failed: true, msg: expect.stringMatching(/timed out.*connection refused/) });
  });
});

describe('facts', () => {
  it('gathers facts in one remote command, under facts and ansible_facts', async () => {
    const before = h.commands.length;
    const r = await run(factsModule, {});
    expect(h.commands.length - before).toBe(1);
    const f = r.facts as Record<string, unknown> & { memory: { total_mb: number }; processor_count: number; selinux: { mode: string } };
    expect(f.memory.total_mb).toBeGreaterThan(0);
    expect(f.processor_count).toBeGreaterThan(0);
    expect(Array.isArray(f.disks)).toBe(true);
    expect(Array.isArray(f.interfaces)).toBe(true);
    expect(f.selinux.mode).toBeTruthy();
    expect(r.ansible_facts).toBe(r.facts);
    const g = await run(gatherFactsModule, {});
    expect((g.facts as { memory: unknown }).memory).toBeDefined();
  });
});
