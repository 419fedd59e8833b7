// File transfer without SFTP: the piped method over an exec channel, ssh_transfer_method's
// smart / sftp / piped, against ssh2's in-process server with its sftp subsystem switched off,
// and against a busybox-only "ramdisk" (the shell and every tool from busybox).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSsh, type SshConnection } from '../../src/connection/ssh.js';
import { pipedGet, pipedPut } from '../../src/connection/transfer-piped.js';
import type { ExecOptions } from '../../src/connection/types.js';
import { UnreachableError } from '../../src/errors.js';
import { copyModule } from '../../src/modules/files/copy.js';
import { slurpModule } from '../../src/modules/files/slurp.js';
import { templateModule } from '../../src/modules/files/template.js';
import type { SshExecHandler } from '../../packages/lab/src/ssh/server.js';
import { scratchDirs } from '../helpers/scratch.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';
import { runModule, testContext } from '../helpers/ssh-module-context.js';

const scratch = scratchDirs();
const MiB = 1024 * 1024;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const mode = (f: string) => statSync(f).mode & 0o7777;
const leftovers = (dir: string) => readdirSync(dir).filter((f) => f.includes('.tsbm-'));

/** Every byte value, several times over, in an order that starts and ends with the awkward ones. */
function allBytes(): Buffer {
  const one = Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 167) % 256));
  return Buffer.concat([
    Buffer.from([0, 10, 13, 0xff, 39, 34, 92]),
    one,
    one.reverse(),
    Buffer.from([0, 10]),
  ]);
}

/** A stream that yields `chunks` only as the test releases them. */
function gatedStream(): { stream: Readable; push(b: Buffer): void; end(): void; fail(e: Error): void } {
  const stream = new Readable({ read() {} });
  return {
    stream,
    push: (b) => void stream.push(b),
    end: () => void stream.push(null),
    fail: (e) => void stream.destroy(e),
  };
}

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('piped transfer on a server without an sftp subsystem (smart falls back)', () => {
  let h: SshHost;
  let conn: SshConnection;
  let dir: string;
  beforeAll(async () => {
    h = await startSshHost({ sftp: false });
    conn = await openSsh(h.spec);
    dir = scratch('tsbm-piped-');
  });
  afterAll(async () => {
    await conn?.close();
    await h?.close();
  });

  it('falls back to piped once and caches the choice for the connection', async () => {
    expect(conn.transport).toBeUndefined();
    await conn.put('one', path.join(dir, 'a'));
    expect(conn.transport).toBe('piped');
    await Promise.all([conn.put('two', path.join(dir, 'b')), conn.put('three', path.join(dir, 'c'))]);
    expect((await conn.get(path.join(dir, 'c'))).toString()).toBe('three');
    expect(h.server.sftpRequests).toBe(1);
    expect(readFileSync(path.join(dir, 'b'), 'utf8')).toBe('two');
  });

  it('creates each file with its mode and replaces an existing one atomically', async () => {
    for (const m of [0o600, 0o640, 0o755, 0o700, 0o444]) {
      const f = path.join(dir, `mode-${m.toString(8)}`);
      await conn.put(`mode ${m}`, f, { mode: m });
      expect(mode(f), m.toString(8)).toBe(m);
      expect(readFileSync(f, 'utf8')).toBe(`mode ${m}`);
    }
    const f = path.join(dir, 'replaced');
    writeFileSync(f, 'old content');
    const before = statSync(f).ino;
    await conn.put('new', f, { mode: 0o600 });
    expect(readFileSync(f, 'utf8')).toBe('new');
    expect(statSync(f).ino).not.toBe(before); // a rename, not a rewrite in place
    expect(leftovers(dir)).toEqual([]);
  });

  it('the file has its final mode before any byte is written, and no byte shows under the final name', async () => {
    const f = path.join(dir, 'early-mode');
    const g = gatedStream();
    const put = conn.put(g.stream, f, { mode: 0o751 });
    // Created private (umask 077), then given its mode, all before the first byte is sent.
    const tmpOf = () => leftovers(dir).map((t) => path.join(dir, t))[0];
    await until(() => {
      const t = tmpOf();
      return t !== undefined && ((statSync(t, { throwIfNoEntry: false })?.mode ?? 0) & 0o100) !== 0;
    }, 'the temp file with its mode');
    const tmp = tmpOf() as string;
    expect(mode(tmp)).toBe(0o751);
    expect(statSync(tmp).size).toBe(0);
    g.push(Buffer.from('part one, '));
    await until(() => statSync(tmp).size > 0, 'the first bytes');
    expect(existsSync(f)).toBe(false);
    g.push(Buffer.from('part two'));
    g.end();
    await put;
    expect(readFileSync(f, 'utf8')).toBe('part one, part two');
    expect(mode(f)).toBe(0o751);
    expect(leftovers(dir)).toEqual([]);
  });

  it('binary content: every byte value survives put and get', async () => {
    const data = allBytes();
    const f = path.join(dir, 'bytes.bin');
    await conn.put(data, f, { mode: 0o600 });
    expect(readFileSync(f).equals(data)).toBe(true);
    expect((await conn.get(f)).equals(data)).toBe(true);
    const s = path.join(dir, 'bytes-stream.bin');
    await conn.put(Readable.from([data.subarray(0, 100), data.subarray(100)]), s);
    expect(readFileSync(s).equals(data)).toBe(true);
    // The content travelled on stdin: no command line carried any of it.
    expect(h.commands.join('\n')).not.toContain('\u00ff');
  });

  it('large files: 48 MiB from a buffer and 24 MiB from a stream, put and read back', async () => {
    const big = randomBytes(48 * MiB);
    const f = path.join(dir, 'big.bin');
    await conn.put(big, f, { mode: 0o644 });
    expect(statSync(f).size).toBe(big.length);
    expect(sha(readFileSync(f))).toBe(sha(big));
    expect(sha(await conn.get(f))).toBe(sha(big));
    const chunks = Array.from({ length: 24 }, () => randomBytes(MiB));
    const s = path.join(dir, 'big-stream.bin');
    await conn.put(Readable.from(chunks), s);
    expect(sha(readFileSync(s))).toBe(sha(Buffer.concat(chunks)));
  }, 120_000);

  it('a source that fails mid-way: an error naming it, the old file untouched, no temp file left', async () => {
    const f = path.join(dir, 'keep-on-source-error');
    writeFileSync(f, 'previous');
    const g = gatedStream();
    const put = conn.put(g.stream, f);
    g.push(randomBytes(256 * 1024));
    await until(
      () => leftovers(dir).length === 1 && statSync(path.join(dir, leftovers(dir)[0] as string)).size > 0,
      'bytes to arrive',
    );
    g.fail(new Error('disk read error on the controller'));
    await expect(put).rejects.toThrow(
      /cannot write .*keep-on-source-error on node1: reading the content to send failed: disk read error/,
    );
    expect(readFileSync(f, 'utf8')).toBe('previous');
    expect(leftovers(dir)).toEqual([]);
  });

  it('clear errors: missing directory, a directory as dest, a missing file to get, the get size cap', async () => {
    await expect(conn.put('x', path.join(dir, 'no/such/dir/x'))).rejects.toThrow(
      /cannot write .*no\/such\/dir\/x on node1: .*(nonexistent|No such file)/i,
    );
    mkdirSync(path.join(dir, 'adir'));
    await expect(conn.put('x', path.join(dir, 'adir'))).rejects.toThrow(/adir is a directory/);
    await expect(conn.get(path.join(dir, 'nope'))).rejects.toThrow(
      /cannot read .*nope on node1: no such file/,
    );
    const f = path.join(dir, 'capped');
    writeFileSync(f, Buffer.alloc(300_000, 1));
    await expect(pipedGet((a, o) => conn.exec(a, o), 'node1', f, { maxBytes: 100_000 })).rejects.toThrow(
      /capped on node1: it is larger than 100000 bytes, the most a piped get reads/,
    );
    expect((await pipedGet((a, o) => conn.exec(a, o), 'node1', f, { maxBytes: 300_000 })).length).toBe(
      300_000,
    );
  });

  it('a reconnected connection chooses again (the server may have changed)', async () => {
    const before = h.server.sftpRequests;
    const handshakes = conn.handshakes;
    h.server.dropConnections();
    // The next command may fail with the drop or already reconnect: either way, a new connection.
    for (let i = 0; i < 50 && conn.handshakes === handshakes; i++) {
      await conn.exec(['true']).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(conn.handshakes).toBe(handshakes + 1);
    expect(conn.transport).toBeUndefined();
    await conn.put('after', path.join(dir, 'after-reconnect'));
    expect(h.server.sftpRequests).toBe(before + 1);
    expect(conn.transport).toBe('piped');
  });
});

describe('a transfer cut off mid-way', () => {
  it('leaves no partial file under the final name (the previous content stays)', async () => {
    const h = await startSshHost({ sftp: false });
    const conn = await openSsh(h.spec);
    const dir = scratch('tsbm-cut-');
    try {
      const f = path.join(dir, 'image.bin');
      writeFileSync(f, 'the previous version');
      const g = gatedStream();
      const put = conn.put(g.stream, f, { mode: 0o600 });
      for (let i = 0; i < 8; i++) g.push(randomBytes(MiB));
      await until(() => {
        const t = leftovers(dir)[0];
        return t !== undefined && statSync(path.join(dir, t)).size >= 4 * MiB;
      }, '4 MiB to arrive');
      h.server.dropConnections();
      await expect(put).rejects.toBeInstanceOf(UnreachableError);
      expect(readFileSync(f, 'utf8')).toBe('the previous version');
      // The same with content of a known size (one round trip: the remote side renames).
      const first = new Set(leftovers(dir));
      const known = randomBytes(16 * MiB);
      const g2 = path.join(dir, 'known.bin');
      const p2 = conn.put(known, g2);
      const arrived = () =>
        leftovers(dir).some(
          (t) => !first.has(t) && (statSync(path.join(dir, t), { throwIfNoEntry: false })?.size ?? 0) > 0,
        );
      await until(arrived, 'bytes of the second put');
      h.server.dropConnections();
      await expect(p2).rejects.toBeInstanceOf(UnreachableError);
      expect(existsSync(g2)).toBe(false);
    } finally {
      await conn.close();
      await h.close();
    }
  }, 60_000);
});

describe('ssh_transfer_method', () => {
  it('sftp forced on a server without it: a clear error naming the setting', async () => {
    const h = await startSshHost({ sftp: false, spec: { transferMethod: 'sftp' } });
    const conn = await openSsh(h.spec);
    const dir = scratch('tsbm-sftp-forced-');
    try {
      const err = await conn
        .put('x', path.join(dir, 'x'))
        .catch((e: unknown) => e as Error & { hint?: string });
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(/cannot start SFTP on node1: .*subsystem/i);
      expect((err as { hint?: string }).hint).toMatch(
        /ssh_transfer_method is sftp .* set ssh_transfer_method: smart \(or piped\)/,
      );
      await expect(conn.get(path.join(dir, 'x'))).rejects.toThrow(/cannot start SFTP on node1/);
      expect(existsSync(path.join(dir, 'x'))).toBe(false);
    } finally {
      await conn.close();
      await h.close();
    }
  });

  it('smart uses SFTP where the server has it (no exec for a put)', async () => {
    const h = await startSshHost();
    const conn = await openSsh(h.spec);
    const dir = scratch('tsbm-smart-sftp-');
    try {
      const execs = h.server.execs;
      await conn.put(allBytes(), path.join(dir, 'x'), { mode: 0o640 });
      expect(conn.transport).toBe('sftp');
      expect(h.server.execs).toBe(execs);
      expect(readFileSync(path.join(dir, 'x')).equals(allBytes())).toBe(true);
    } finally {
      await conn.close();
      await h.close();
    }
  });

  it('piped forced on a server with SFTP never asks for the subsystem', async () => {
    const h = await startSshHost({ spec: { transferMethod: 'piped' } });
    const conn = await openSsh(h.spec);
    const dir = scratch('tsbm-forced-piped-');
    try {
      await conn.put(allBytes(), path.join(dir, 'x'), { mode: 0o640 });
      expect((await conn.get(path.join(dir, 'x'))).equals(allBytes())).toBe(true);
      expect(conn.transport).toBe('piped');
      expect(h.server.sftpRequests).toBe(0);
      expect(mode(path.join(dir, 'x'))).toBe(0o640);
    } finally {
      await conn.close();
      await h.close();
    }
  });

  it('a server whose sftp subsystem starts but exits at once (dropbear without sftp-server) falls back too', async () => {
    const h = await startSshHost({ sftp: 'exit127' });
    const conn = await openSsh(h.spec);
    const dir = scratch('tsbm-sftp-dies-');
    try {
      await conn.put('y', path.join(dir, 'y'));
      expect(readFileSync(path.join(dir, 'y'), 'utf8')).toBe('y');
      expect(conn.transport).toBe('piped');
      expect(h.server.sftpRequests).toBe(1);
    } finally {
      await conn.close();
      await h.close();
    }
  });
});

const busybox = ['/usr/bin/busybox', '/bin/busybox'].find((p) => existsSync(p));

/** An exec handler whose shell and every tool are busybox applets, and nothing else on PATH. */
function busyboxRamdisk(dir: string, without: string[] = []): SshExecHandler {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const applet of [
    'sh',
    'cat',
    'chmod',
    'mv',
    'rm',
    'wc',
    'sha256sum',
    'md5sum',
    'true',
    'kill',
    'sudo',
  ]) {
    if (applet === 'sudo' || without.includes(applet)) continue;
    symlinkSync(busybox as string, path.join(bin, applet));
  }
  return (command, session) => {
    const child = spawn(busybox as string, ['sh', '-c', command], {
      env: { PATH: bin, SHELL: path.join(bin, 'sh'), ...session.env },
      stdio: 'pipe',
      detached: true,
    });
    return child;
  };
}

describe.skipIf(!busybox)("piped transfer on a busybox-only ramdisk (needs Debian's busybox)", () => {
  for (const [name, without, algo] of [
    ['with sha256sum', [], 'sha256'],
    ['without sha256sum: md5sum checks it', ['sha256sum'], 'md5'],
    ['with neither: the size alone', ['sha256sum', 'md5sum'], 'size'],
  ] as const) {
    it(`${name}`, async () => {
      const dir = scratch('tsbm-busybox-');
      const h = await startSshHost({ sftp: false, exec: busyboxRamdisk(dir, [...without]) });
      const conn = await openSsh(h.spec);
      try {
        const data = Buffer.concat([allBytes(), randomBytes(3 * MiB)]);
        const f = path.join(dir, 'file.bin');
        await conn.put(data, f, { mode: 0o600 });
        expect(sha(readFileSync(f))).toBe(sha(data));
        expect(mode(f)).toBe(0o600);
        await conn.put(Readable.from([data]), f, { mode: 0o644 });
        expect(sha(readFileSync(f))).toBe(sha(data));
        expect(mode(f)).toBe(0o644);
        expect(sha(await conn.get(f))).toBe(sha(data));
        // Which check ran shows in the status line the script printed.
        const outs: string[] = [];
        const exec = async (a: readonly string[], o?: ExecOptions) => {
          const r = await conn.exec(a, o);
          outs.push(r.stdout);
          return r;
        };
        await pipedPut(exec, 'node1', data, f, { mode: 0o600 });
        const want =
          algo === 'sha256' ? sha(data) : algo === 'md5' ? createHash('md5').update(data).digest('hex') : '-';
        expect(outs.join('')).toBe(`tsbm-put done ${data.length} ${algo} ${want}\n`);
        expect(leftovers(dir)).toEqual([]);
      } finally {
        await conn.close();
        await h.close();
      }
    });
  }
});

describe('copy, template and slurp on a server without SFTP', () => {
  it('write with the mode, idempotently, and read back, all piped', async () => {
    const h = await startSshHost({ sftp: false });
    const conn = await openSsh(h.spec);
    const dir = scratch('tsbm-modules-piped-');
    writeFileSync(path.join(dir, 'motd.hbs'), 'welcome to {{ inventory_hostname }}\n');
    const t = testContext(conn, { vars: { inventory_hostname: 'node1' }, playbookDir: dir });
    try {
      const dest = path.join(dir, 'out', 'agent.conf');
      mkdirSync(path.dirname(dest));
      const c1 = await runModule(copyModule, t.ctx, { content: 'key=value\n', dest, mode: '0600' });
      expect(c1.changed).toBe(true);
      expect(readFileSync(dest, 'utf8')).toBe('key=value\n');
      expect(mode(dest)).toBe(0o600);
      expect((await runModule(copyModule, t.ctx, { content: 'key=value\n', dest, mode: '0600' })).changed).toBe(false);
      const motd = path.join(dir, 'out', 'motd');
      await runModule(templateModule, t.ctx, { src: path.join(dir, 'motd.hbs'), dest: motd, mode: '0644' });
      expect(readFileSync(motd, 'utf8')).toBe('welcome to node1\n');
      expect(mode(motd)).toBe(0o644);
      const s = await runModule(slurpModule, t.ctx, { src: motd });
      expect(Buffer.from(String(s.content), 'base64').toString()).toBe('welcome to node1\n');
      expect(conn.transport).toBe('piped');
      expect(h.server.sftpRequests).toBe(1);
    } finally {
      await conn.close();
      await h.close();
    }
  });
});
