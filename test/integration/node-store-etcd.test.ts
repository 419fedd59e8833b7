// What only the etcd store has: refusing at start when etcd does not answer, TLS with client
// certificates as etcd checks them, a lease lost when etcd goes away mid-run, and a controller
// paused past its TTL (SIGSTOP) that finds, once continued, that it can no longer write.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3, Range } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { openNodeStore } from '../../src/nodes/open.js';
import { parseStoreSetting } from '../../src/nodes/setting.js';
import type { HeldNodes } from '../../src/nodes/types.js';
import { ETCD, type EtcdServer, makeTlsFiles, startEtcd } from '../helpers/etcd-server.js';
import { runTsbm } from '../helpers/fault-cli.js';
import { distBuilt, holdInChild } from '../helpers/node-store-child.js';

const TTL = 2;
const open = (setting: string) => openNodeStore(parseStoreSetting(setting, '--state', undefined));
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as TsbmError,
  );

if (!ETCD) it.skip('etcd node store: SKIPPED because etcd is not installed (apt-get install etcd-server)', () => {});

describe.skipIf(!ETCD)('etcd node store', () => {
  let etcd: EtcdServer;
  let n = 0;
  const setting = () => `etcd://${etcd.hostPort}/e${process.pid}-${++n}?ttl=${TTL}`;
  beforeAll(async () => {
    etcd = await startEtcd();
  });
  afterAll(async () => {
    await etcd?.remove();
  });

  it('refuses to open when etcd does not answer: one line naming the endpoints, exit 1', async () => {
    // A port where an etcd answered a moment ago and nothing listens now.
    const dead = await startEtcd();
    const where = dead.hostPort;
    await dead.remove();
    const e = await failure(open(`etcd://${where}`));
    expect(e).toBeInstanceOf(TsbmError);
    expect(e.exitCode).toBe(1);
    expect(e.oneLine()).toMatch(new RegExp(`^the node store etcd at http://${where.replace(/\./g, '\\.')} did not answer: .*nothing was touched`));
  }, 30_000);

  it('loses every lease of a run when etcd goes away, and refuses its checks; a new run takes the nodes once etcd is back', async () => {
    const s = setting();
    const store = await open(s);
    const held = await store.acquire([{ host: 'node01', key: 'k1' }, { host: 'node02', key: 'k2' }], 'run-A');
    await etcd.stop();
    const t0 = Date.now();
    await new Promise<void>((ok) => held.lease('k2')!.lost.addEventListener('abort', () => ok(), { once: true }));
    // Within the TTL's mechanics, not etcd3's own "lost" (which waits for twice the TTL): the run
    // stops acting about when etcd would expire the lease.
    expect(Date.now() - t0).toBeLessThan(2 * TTL * 1000);
    expect(held.lease('k1')!.lost.aborted).toBe(true);
    expect(String((held.lease('k1')!.lost.reason as Error).message)).toMatch(/not renewed|lost/);
    expect((await failure(store.check(held.lease('k1')!))).message).toMatch(/host node01: run run-A no longer holds the node's lock/);
    await etcd.restart();
    await held.release();
    await store.close();
    const next = await open(s);
    let taken: HeldNodes | undefined;
    for (let i = 0; i < 100 && !taken; i++) {
      taken = await next.acquire([{ host: 'node01', key: 'k1' }], 'run-B').catch(() => undefined);
      if (!taken) await new Promise((r) => setTimeout(r, 100));
    }
    expect(taken).toBeDefined();
    await taken!.release();
    await next.close();
  }, 60_000);

  it.skipIf(!distBuilt)('a controller paused past its TTL is refused by the fencing check when it continues', async () => {
    const s = setting();
    const paused = holdInChild(s, 'run-paused', ['k1']);
    expect(await paused.first).toMatch(/^held \d+$/);
    expect(await paused.send('write deploying')).toBe('ok');
    paused.proc.kill('SIGSTOP');
    const other = await open(s);
    let taken: HeldNodes | undefined;
    for (let i = 0; i < 100 && !taken; i++) {
      taken = await other.acquire([{ host: 'k1', key: 'k1' }], 'run-other').catch(() => undefined);
      if (!taken) await new Promise((r) => setTimeout(r, 100));
    }
    expect(taken).toBeDefined();
    await other.write(taken!.lease('k1')!, { key: 'k1', name: 'k1', provisionState: 'deploying', protected: false, runId: 'run-other' });
    paused.proc.kill('SIGCONT');
    expect(await paused.send('check')).toMatch(/^refused host k1: run run-paused no longer holds the node's lock/);
    expect(await paused.send('write active')).toMatch(/^refused /);
    expect(await other.get('k1')).toMatchObject({ runId: 'run-other', provisionState: 'deploying', version: 2 });
    expect(await paused.send('release')).toBe('ok');
    await paused.exited;
    // The paused run's release did not free the node from the run that holds it now.
    await other.check(taken!.lease('k1')!);
    await taken!.release();
    await other.close();
  }, 60_000);
});

describe.skipIf(!ETCD)('etcd node store with etcd users (auth enabled)', () => {
  let etcd: EtcdServer;
  beforeAll(async () => {
    etcd = await startEtcd();
    // What `etcdctl user add / role grant-permission --prefix / auth enable` do, through the
    // client library (Debian's etcd-server does not ship etcdctl).
    const admin = new Etcd3({ hosts: `http://${etcd.hostPort}` });
    try {
      await admin.user('root').create('rootpw');
      await admin.role('root').create();
      await admin.user('root').addRole('root');
      await admin.user('tsbm').create('s3cret-pw');
      await admin.role('tsbm').create();
      await admin.role('tsbm').grant({ permission: 'Readwrite', range: Range.prefix('tsbm/') });
      await admin.user('tsbm').addRole('tsbm');
      await admin.auth.authEnable();
    } finally {
      admin.close();
    }
  });
  afterAll(async () => {
    await etcd?.remove();
  });

  it('locks, leases and records work as the user; a wrong password is refused at open without showing it', async () => {
    const setting = (pw: string) =>
      parseStoreSetting(`etcd://${etcd.hostPort}?user=tsbm&ttl=${TTL}`, '--state', undefined, { env: { TSBM_ETCD_PASSWORD: pw }, uid: 0, home: '/' });
    const store = await openNodeStore(setting('s3cret-pw'));
    const held = await store.acquire([{ host: 'n', key: 'k' }], 'run-auth');
    await store.write(held.lease('k')!, { key: 'k', name: 'n', provisionState: 'deploying', protected: false });
    // Past the TTL: the keep-alives (a stream, authenticated too) hold the lease.
    await new Promise((r) => setTimeout(r, TTL * 1000 + 500));
    await store.check(held.lease('k')!);
    expect(held.lease('k')!.lost.aborted).toBe(false);
    await held.release();
    await store.close();
    const e = await failure(openNodeStore(setting('wrong-pw')));
    expect(e.oneLine()).toMatch(/^the node store etcd at \S+ refused user tsbm: etcdserver: authentication failed, invalid user ID or password \(check TSBM_ETCD_USER/);
    expect(e.oneLine()).not.toContain('wrong-pw');
  }, 60_000);
});

describe.skipIf(!ETCD)('etcd node store over TLS with client certificates', () => {
  // Made in beforeAll, not when the file is collected: a run that filters these tests out (-t)
  // would otherwise leave the directory behind.
  let dir = '';
  let etcd: EtcdServer;
  let pem: ReturnType<typeof makeTlsFiles>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-etcd-tls-'));
    pem = makeTlsFiles(dir);
    etcd = await startEtcd({ tls: { cert: pem.serverCert, key: pem.serverKey, clientCa: pem.ca } });
  });
  afterAll(async () => {
    await etcd?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('works with the CA and a client certificate; without the certificate it is refused at open', async () => {
    const q = `cacert=${pem.ca}&cert=${pem.clientCert}&key=${pem.clientKey}`;
    const store = await open(`etcds://${etcd.hostPort}?${q}`);
    expect(store.where).toBe(`etcd at https://${etcd.hostPort}`);
    const held = await store.acquire([{ host: 'n', key: 'k' }], 'run-tls');
    await store.write(held.lease('k')!, { key: 'k', name: 'n', provisionState: 'active', protected: false });
    await held.release();
    expect((await store.list()).map((r) => r.key)).toEqual(['k']);
    await store.close();
    const e = await failure(open(`etcds://${etcd.hostPort}?cacert=${pem.ca}`));
    expect(e.oneLine()).toMatch(/did not answer/);
    const missing = await failure(open(`etcds://${etcd.hostPort}?cacert=${join(dir, 'nope.pem')}`));
    expect(missing.oneLine()).toMatch(/cannot read the etcd CA certificate .*nope\.pem \(ENOENT\)/);
  }, 60_000);

  it('through the CLI with TLS files from the environment: the records, and nothing else on stderr', async () => {
    const r = await runTsbm(['nodes', 'list', '--state', `etcds://${etcd.hostPort}`], {
      cwd: dir,
      env: { ...process.env, TSBM_ETCD_CACERT: pem.ca, TSBM_ETCD_CERT: pem.clientCert, TSBM_ETCD_KEY: pem.clientKey },
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NODE\s+STATE/);
  }, 60_000);
});
