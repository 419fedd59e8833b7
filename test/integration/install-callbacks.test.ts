// The installer callback endpoint on tsbm's HTTP file server, over real HTTP on loopback: a good
// install (start, end), an error with the installer's lines, a wrong token, a replay, a time-out,
// the pull secret handed out once, the disk question, a kickstart served at a fixed path until
// the installer starts, and many nodes at once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeRefusals, installerLines, waitForInstall } from '../../src/modules/anaconda/install-wait.js';
import { type FileServer, startFileServer } from '../../src/http/file-server.js';
import { InstallCallbacks, MAX_CALLBACK_BODY, type Registration } from '../../src/http/install-callbacks.js';
import { ksUrlPath } from '../../src/modules/anaconda/ks-url-path.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let server: FileServer;
let cb: InstallCallbacks;

beforeEach(async () => {
  server = await startFileServer({ host: '127.0.0.1' });
  cb = InstallCallbacks.attach(server);
});
afterEach(async () => {
  await server.close();
});

async function post(reg: Registration, what: string, body = '', token = reg.token): Promise<{ status: number; text: string }> {
  const res = await fetch(`${reg.url}/${what}`, { method: 'POST', headers: { 'X-Tsbm-Token': token }, body });
  return { status: res.status, text: await res.text() };
}

const never = (): AbortSignal => new AbortController().signal;

describe('installer callbacks', () => {
  it('start then end: the wait ends with the times; the file server still serves files', async () => {
    const reg = cb.register('node01');
    expect(reg.url).toMatch(new RegExp(`^${server.url}/install/[0-9a-f]{24}$`));
    const waiting = waitForInstall(reg, { timeoutMs: 10_000, signal: never() });
    expect((await post(reg, 'start')).status).toBe(200);
    expect(reg.phase).toBe('started');
    expect((await post(reg, 'end')).status).toBe(200);
    const out = await waiting;
    expect(out.kind).toBe('ended');
    expect(out.startedMs).toBeGreaterThanOrEqual(0);
    expect(reg.callbacks.map((c) => [c.status, c.from])).toEqual([
      ['start', '127.0.0.1'],
      ['end', '127.0.0.1'],
    ]);
    expect((await fetch(`${server.url}/files/nothing`)).status).toBe(404);
  });

  it('error carries the installer’s own lines into the outcome', async () => {
    const reg = cb.register('node01');
    const waiting = waitForInstall(reg, { timeoutMs: 10_000, signal: never() });
    await post(reg, 'start');
    const log = `${Array.from({ length: 40 }, (_, i) => `12:00:${String(i).padStart(2, '0')} INFO anaconda: step ${i}`).join('\n')}\n12:01:00 ERROR anaconda: payload: liveimg: 404 Not Found\n`;
    expect((await post(reg, 'error', log)).status).toBe(200);
    const out = await waiting;
    expect(out.kind).toBe('failed');
    const lines = installerLines(out.kind === 'failed' ? out.body : '');
    expect(lines).toMatch(/\| 12:01:00 ERROR anaconda: payload: liveimg: 404 Not Found$/);
    expect(lines).toMatch(/^ {2}\(16 earlier lines not shown\)/);
  });

  it('a wrong or missing token is refused and recorded; the node still waits for its own installer', async () => {
    const reg = cb.register('node01');
    const other = cb.register('node02');
    expect((await post(reg, 'start', '', 'guessed')).status).toBe(403);
    expect((await post(reg, 'start', '', other.token)).status).toBe(403);
    const res = await fetch(`${reg.url}/start`, { method: 'POST' });
    expect(res.status).toBe(403);
    expect(reg.phase).toBe('waiting');
    expect(reg.refused.map((r) => r.why)).toEqual(['wrong_token', 'wrong_token', 'wrong_token']);
    expect(describeRefusals(reg)).toBe('3 callbacks refused (start with wrong token from 127.0.0.1 x3)');
    expect((await fetch(`${reg.url}/start`, { method: 'GET' })).status).toBe(405);
    expect((await fetch(`${server.url}/install/${'f'.repeat(24)}/start`, { method: 'POST' })).status).toBe(404);
  });

  it('a replayed start, and anything after the last callback, is refused; end before start too', async () => {
    const reg = cb.register('node01');
    expect((await post(reg, 'end')).status).toBe(409);
    expect(reg.refused.at(-1)?.why).toBe('out_of_order');
    await post(reg, 'start');
    expect((await post(reg, 'start')).status).toBe(409);
    expect(reg.refused.at(-1)?.why).toBe('replayed');
    await post(reg, 'end');
    for (const what of ['start', 'end', 'error', 'disk', 'pull-secret']) expect((await post(reg, what)).status, what).toBeGreaterThanOrEqual(409);
    expect(reg.phase).toBe('ended');
    expect(reg.callbacks.map((c) => c.status)).toEqual(['start', 'end']);
  });

  it('a new registration of the host (a rerun of the task) makes the old token useless', async () => {
    const first = cb.register('node01');
    const second = cb.register('node01');
    expect((await post(first, 'start')).status).toBe(410);
    expect((await post(second, 'start')).status).toBe(200);
    expect(cb.find('node01')).toBe(second);
  });

  it('times out, saying whether the installer ever started', async () => {
    const silent = cb.register('node01');
    const t0 = Date.now();
    expect((await waitForInstall(silent, { timeoutMs: 300, signal: never() })).kind).toBe('timeout');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    const stuck = cb.register('node02');
    await post(stuck, 'start');
    const out = await waitForInstall(stuck, { timeoutMs: 300, signal: never() });
    expect(out).toMatchObject({ kind: 'timeout', startedMs: expect.any(Number) });
  });

  it('ticks with the elapsed time while it waits, and stops on abort', async () => {
    const reg = cb.register('node01');
    const ticks: number[] = [];
    const ac = new AbortController();
    const waiting = waitForInstall(reg, { timeoutMs: 10_000, signal: ac.signal, tickMs: 50, onTick: (ms) => ticks.push(ms) });
    await new Promise((r) => setTimeout(r, 280));
    ac.abort(new Error('interrupted'));
    await expect(waiting).rejects.toThrow('interrupted');
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(ticks[1]!).toBeGreaterThan(ticks[0]!);
  });

  it('hands the pull secret out once, between start and end only', async () => {
    const reg = cb.register('node01', { pullSecret: '{"auths":{"reg":{"auth":"eDp5"}}}' });
    expect((await post(reg, 'pull-secret')).status).toBe(409);
    await post(reg, 'start');
    const got = await post(reg, 'pull-secret');
    expect(got).toEqual({ status: 200, text: '{"auths":{"reg":{"auth":"eDp5"}}}' });
    expect(reg.pullSecretFetched).toBe(true);
    const again = await post(reg, 'pull-secret');
    expect(again.status).toBe(410);
    expect(again.text).not.toContain('eDp5');
    expect(reg.refused.at(-1)).toMatchObject({ what: 'pull-secret', why: 'replayed' });
  });

  it('answers the disk question with kickstart lines, or 422 and the reason', async () => {
    const reg = cb.register('node01', { chooseDisk: (json) => (json.includes('vda') ? { ok: true, device: '/dev/vda', lines: 'ignoredisk --only-use=vda\n' } : { ok: false, message: 'no disk matches' }) });
    await post(reg, 'start');
    expect(await post(reg, 'disk', '{"blockdevices":[{"name":"vda"}]}')).toEqual({ status: 200, text: 'ignoredisk --only-use=vda\n' });
    expect(await post(reg, 'disk', '{}')).toEqual({ status: 422, text: 'no disk matches\n' });
    expect(reg.disk).toEqual({ ok: false, message: 'no disk matches' });
  });

  it('refuses a body larger than the bound without keeping it', async () => {
    const reg = cb.register('node01');
    await post(reg, 'start');
    const r = await post(reg, 'error', 'x'.repeat(MAX_CALLBACK_BODY + 1)).catch(() => ({ status: 413, text: '' }));
    expect(r.status).toBe(413);
    expect(reg.phase).toBe('started');
  });

  it('serves a kickstart at a fixed path until the installer starts', async () => {
    const reg = cb.register('node01');
    cb.serveKickstart('/ks/node01.cfg', reg, 'text\n');
    expect(await (await fetch(`${server.url}/ks/node01.cfg`)).text()).toBe('text\n');
    expect((await fetch(`${server.url}/ks/node01.cfgX`)).status).toBe(404);
    await post(reg, 'start');
    expect((await fetch(`${server.url}/ks/node01.cfg`)).status).toBe(410);
  });

  it('fifty nodes calling back at once each get their own outcome', async () => {
    const regs = Array.from({ length: 50 }, (_, i) => cb.register(`node${i}`));
    const waits = regs.map((r) => waitForInstall(r, { timeoutMs: 20_000, signal: never() }));
    await Promise.all(
      regs.map(async (r, i) => {
        expect((await post(r, 'start')).status).toBe(200);
        // Every fifth node fails; one node also gets another node's token thrown at it.
        if (i === 7) expect((await post(r, 'end', '', regs[8]!.token)).status).toBe(403);
        expect((await post(r, i % 5 === 0 ? 'error' : 'end', `node${i} log`)).status).toBe(200);
      }),
    );
    const outs = await Promise.all(waits);
    outs.forEach((o, i) => {
      expect(o.kind).toBe(i % 5 === 0 ? 'failed' : 'ended');
      if (o.kind === 'failed') expect(o.body).toBe(`node${i} log`);
    });
    expect(regs[7]!.refused).toHaveLength(1);
    expect(regs.filter((r) => r.refused.length > 0)).toHaveLength(1);
  });

  // Routes matched by prefix: a ks_url path /f or /files answered for every published file (404).
  it('a kickstart path is matched exactly: one that starts the published files\' paths shadows none of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsbm-ks-route-'));
    try {
      writeFileSync(join(dir, 'image.raw'), 'image bytes');
      const published = await server.publish(join(dir, 'image.raw'));
      for (const [i, path] of ['/f', '/files', '/fil'].entries()) cb.serveKickstart(path, cb.register(`node${i}`), `ks ${path}\n`);
      expect(await (await fetch(published)).text()).toBe('image bytes');
      expect(await (await fetch(`${server.url}/files`)).text()).toBe('ks /files\n');
      // The callbacks too: /install (no slash) is not /install/...
      const reg = cb.register('node9');
      cb.serveKickstart('/inst', reg, 'ks\n');
      expect((await post(reg, 'start')).status).toBe(200);
      // The server refuses a path inside its own prefixes, and a prefix route over published files.
      expect(() => server.routeExact('/files/x/image.raw', async () => undefined)).toThrow(/under \/files\//);
      expect(() => server.routeExact('/install/abc', async () => undefined)).toThrow(/under \/install\//);
      expect(() => server.route('/', async () => undefined)).toThrow(/overlap/);
      expect(() => server.route('/fi', async () => undefined)).toThrow(/not be a path prefix|overlap/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ks_url paths', () => {
  const path = (u: string) => ksUrlPath(new URL(u));
  it('a path of its own is taken, decoded as the server matches it', () => {
    expect(path('http://10.0.0.5:8080/ks/node01.cfg')).toEqual({ path: '/ks/node01.cfg' });
    expect(path('http://10.0.0.5:8080/ks/a%20b.cfg')).toEqual({ path: '/ks/a b.cfg' });
  });
  it("tsbm's own paths, the root, a directory and a query are refused with the reason", () => {
    for (const u of ['http://h/', 'http://h/files', 'http://h/files/x', 'http://h/install', 'http://h/install/abc/start', 'http://h/%66iles/x', 'http://h/ks/', 'http://h/ks.cfg?x=1']) {
      expect('problem' in path(u), u).toBe(true);
    }
    expect(path('http://h/files/x')).toEqual({ problem: "its path /files/x is tsbm's own (/files/...: published files and installer callbacks)" });
  });
});
