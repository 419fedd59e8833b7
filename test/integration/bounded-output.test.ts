// A host that answers with far more than anyone asked for: a command printing 200 MB keeps its
// head and tail (16 MiB by default) with a note of what was dropped, a file read over SFTP stops
// at tsbm_max_get, and the memory the controller holds stays near the caps.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { execSteps } from '../../src/connection/exec-steps.js';
import { localConnection } from '../../src/connection/local.js';
import { openSsh, type SshConnection } from '../../src/connection/ssh.js';
import { pipedGet } from '../../src/connection/transfer-piped.js';
import type { ExecOptions } from '../../src/connection/types.js';
import { HeadTailBuffer } from '../../src/util/bounded-buffer.js';
import { MIB } from '../../src/util/limits.js';
import { heldNow, retained } from '../helpers/heap.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function connected(): Promise<{ h: SshHost; c: SshConnection }> {
  const h = await startSshHost();
  open.push(h);
  const c = await openSsh(h.spec);
  open.push(c);
  return { h, c };
}

describe('remote output is bounded', () => {
  it('200 MB of stdout: 16 MiB kept (head and tail), a note says how much was dropped, memory stays bounded', async () => {
    const { c } = await connected();
    const before = retained();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, heldNow());
    }, 20);
    // 'A' lines, then 200 MB of 'x', then a last line: the head and the tail must both survive.
    const r = await c
      .exec(['sh', '-c', 'echo FIRST-LINE; head -c 200000000 /dev/zero | tr "\\0" x; echo; echo LAST-LINE'])
      .finally(() => clearInterval(sampler));
    peak = Math.max(peak, heldNow());
    // What the result keeps: the 16 MiB kept (one byte a character), not 200 MB.
    expect(retained() - before).toBeLessThan(48 * MIB);
    expect(r.rc).toBe(0);
    expect(r.stdout.length).toBeLessThan(16 * MIB + 200);
    expect(r.stdout.startsWith('FIRST-LINE\n')).toBe(true);
    expect(r.stdout.trimEnd().endsWith('LAST-LINE')).toBe(true);
    const note = /\[tsbm: (\d+) bytes of stdout dropped here; kept the first and last 8 MiB \(raise tsbm_max_output to keep more\)\]/.exec(r.stdout);
    expect(note).not.toBeNull();
    expect(Number(note?.[1])).toBe(200_000_000 + 'FIRST-LINE\n\nLAST-LINE\n'.length - 16 * MIB);
    // Held at any moment, garbage not yet collected included: the kept 16 MiB and chunks in
    // passing, far from the 600 MB an unbounded buffer holds (the chunks, their concatenation
    // and the string).
    expect(peak - before).toBeLessThan(300 * MIB);
  }, 60_000);

  it('the cap is the caller\'s to raise (ExecOptions.maxOutputBytes), and stderr is bounded the same way', async () => {
    const { c } = await connected();
    const r = await c.exec(['sh', '-c', 'head -c 3000000 /dev/zero | tr "\\0" e >&2'], { maxOutputBytes: 1 * MIB });
    expect(r.stderr).toMatch(/\[tsbm: \d+ bytes of stderr dropped here; kept the first and last 512 KiB/);
    expect(r.stderr.length).toBeLessThan(1 * MIB + 200);
    const whole = await c.exec(['sh', '-c', 'head -c 3000000 /dev/zero | tr "\\0" e'], { maxOutputBytes: 4 * MIB });
    expect(whole.stdout).toBe('e'.repeat(3_000_000));
  }, 30_000);

  it('the controller (local connection) keeps to the same cap', async () => {
    const r = await localConnection().exec(['sh', '-c', 'head -c 5000000 /dev/zero | tr "\\0" y'], { maxOutputBytes: 2 * MIB });
    expect(r.stdout.length).toBeLessThan(2 * MIB + 200);
    expect(r.stdout).toMatch(/bytes of stdout dropped here/);
  });

  it('a batch whose middle step overflows still reports each step\'s own status, never a neighbour\'s', async () => {
    const { c } = await connected();
    const big = (rc: number) => ['sh', '-c', `head -c 3000000 /dev/zero | tr "\\0" z; exit ${rc}`];
    // The first two steps' status lines land in the dropped middle: after the first 512 KiB,
    // and more than 512 KiB before the end.
    const results = await execSteps(c, [big(0), ['false'], big(4), ['echo', 'tail-step']], { maxOutputBytes: 1 * MIB });
    for (const lost of [results[0], results[1]]) {
      expect(lost?.rc).toBe(255);
      expect(lost?.stderr).toMatch(/exit status was in output tsbm dropped/);
    }
    expect(results[2]?.rc).toBe(4);
    expect(results[3]).toMatchObject({ rc: 0, stdout: 'tail-step\n' });
  }, 30_000);
});

describe('files read from a host are bounded', () => {
  it('an SFTP get over tsbm_max_get is refused after fstat, naming the file and the knob', async () => {
    const { h, c } = await connected();
    const big = path.join(h.dir, 'big.bin');
    writeFileSync(big, Buffer.alloc(3 * MIB, 1));
    const err = (await c.get(big, { maxBytes: 1 * MIB }).catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toBe(`refused to read ${big} on node1: it is ${3 * MIB} bytes, larger than 1 MiB`);
    expect(err.hint).toMatch(/tsbm_max_get/);
    expect((await c.get(big, { maxBytes: 4 * MIB })).length).toBe(3 * MIB);
  });

  it('a file whose size stat does not tell (a device, /proc) stops at the cap', async () => {
    const { c } = await connected();
    await expect(c.get('/dev/zero', { maxBytes: 2 * MIB })).rejects.toThrow(/refused to read \/dev\/zero on node1: it is larger than 2 MiB/);
    // Small ones still read whole.
    expect((await c.get('/proc/self/status')).toString()).toMatch(/^Name:/);
  });

  it('a piped get (no SFTP, or under become) stops at the cap, and a file under it arrives whole, never cut', async () => {
    const { h, c } = await connected();
    // Larger than the default output cap (16 MiB): the file is the command's output, and it
    // must not lose its middle to that cap.
    const data = Buffer.alloc(20 * MIB);
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32BE(i, i);
    const file = path.join(h.dir, 'b.bin');
    writeFileSync(file, data);
    const exec = (argv: readonly string[], o?: ExecOptions) => c.exec(argv, o);
    await expect(pipedGet(exec, 'node1', file, { maxBytes: 8 * MIB })).rejects.toThrow(/b\.bin on node1: it is larger than 8 MiB/);
    expect((await pipedGet(exec, 'node1', file, { maxBytes: 32 * MIB })).equals(data)).toBe(true);
  }, 30_000);
});

describe('HeadTailBuffer', () => {
  it('keeps exactly the first and last halves, in any chunking', () => {
    const input = Buffer.from(Array.from({ length: 1000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''));
    for (const size of [1, 7, 100, 999, 1000]) {
      const b = new HeadTailBuffer(100, 'stdout');
      for (let i = 0; i < input.length; i += size) b.push(input.subarray(i, i + size));
      const s = b.toString();
      expect(s.startsWith(input.subarray(0, 50).toString())).toBe(true);
      expect(s.endsWith(input.subarray(950).toString())).toBe(true);
      expect(b.dropped).toBe(900);
      expect(b.total).toBe(1000);
    }
    const small = new HeadTailBuffer(100, 'stdout');
    small.push(Buffer.from('hello'));
    expect(small.toString()).toBe('hello');
  });
});
