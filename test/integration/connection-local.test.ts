import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { localConnection } from '../../src/connection/local.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-local-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('local connection', () => {
  const c = localConnection();
  it('spawns argv without a shell', async () => {
    const r = await c.exec(['echo', '$HOME', '`id`', ';', 'x']);
    expect(r).toMatchObject({ rc: 0, stdout: '$HOME `id` ; x\n' });
  });
  it('execShell goes through sh; env, cwd and stdin apply', async () => {
    const r = await c.execShell('pwd; echo "$V"; cat', { env: { V: 'v1' }, cwd: dir, stdin: 'in' });
    expect(r.stdout).toBe(`${dir}\nv1\nin`);
  });
  it('non-zero rc and missing programs', async () => {
    expect((await c.exec(['sh', '-c', 'exit 7'])).rc).toBe(7);
    await expect(c.exec(['/no/such/program'])).rejects.toThrow(/cannot run/);
  });
  it('kills on timeout and on abort', async () => {
    await expect(c.exec(['sleep', '10'], { timeout: 200 })).rejects.toThrow(/timed out after 200 ms/);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stopped')), 100);
    await expect(c.exec(['sleep', '10'], { signal: ac.signal })).rejects.toThrow('stopped');
  });
  it('put writes atomically with the mode; get reads', async () => {
    const f = path.join(dir, 'p.txt');
    await c.put('data', f, { mode: 0o600 });
    expect(statSync(f).mode & 0o777).toBe(0o600);
    await c.put(Buffer.from('new'), f, { mode: 0o644 });
    expect(readFileSync(f, 'utf8')).toBe('new');
    expect(statSync(f).mode & 0o777).toBe(0o644);
    expect((await c.get(f)).toString()).toBe('new');
    await expect(c.get(path.join(dir, 'none'))).rejects.toThrow(/cannot read/);
  });
});
