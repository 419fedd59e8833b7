// `tsbm nodes` through the built CLI, on the file store and on a real etcd: list and show what
// runs recorded (text and JSON), protect and unprotect (refused while a run holds the node),
// and the store setting from --state or TSBM_STATE; an etcd that does not answer is one line,
// exit 1, a bad setting exit 5.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNodeStore } from '../../src/nodes/open.js';
import { parseStoreSetting } from '../../src/nodes/setting.js';
import { ETCD, type EtcdServer, startEtcd } from '../helpers/etcd-server.js';
import { runTsbm } from '../helpers/fault-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-nodescli-'));
// Started at the top: describe.each below needs its address while the file is collected.
const etcd: EtcdServer | undefined = ETCD ? await startEtcd() : undefined;
afterAll(async () => {
  await etcd?.remove();
  rmSync(dir, { recursive: true, force: true });
});

const env: NodeJS.ProcessEnv = { ...process.env, TSBM_LOCK_DIR: join(dir, 'locks') };
delete env.TSBM_STATE;
const tsbm = (args: string[], extra: NodeJS.ProcessEnv = {}) => runTsbm(['nodes', ...args], { cwd: dir, env: { ...env, ...extra }, timeoutMs: 60_000 });

const settings = () => [`files:${join(dir, 'state')}`, ...(etcd ? [`etcd://${etcd.hostPort}/cli${process.pid}`] : [])];

describe.each(settings())('tsbm nodes on %s', (setting) => {
  beforeAll(async () => {
    // What a run leaves: two records written under the run's locks.
    const store = await openNodeStore(parseStoreSetting(setting, 'test', undefined));
    const held = await store.acquire([{ host: 'node01', key: 'bmc:10.0.0.5:443' }, { host: 'node02', key: 'bmc:10.0.0.6:443' }], 'run-1');
    await store.write(held.lease('bmc:10.0.0.5:443')!, {
      key: 'bmc:10.0.0.5:443', name: 'node01', provisionState: 'active', protected: false, image: 'oci://reg/os:42', runId: 'run-1', activeSince: 1_700_000_000_000,
    });
    await store.write(held.lease('bmc:10.0.0.6:443')!, {
      key: 'bmc:10.0.0.6:443', name: 'node02', provisionState: 'deploy failed', protected: false, runId: 'run-1', lastError: 'pull failed',
    });
    await held.release();
    await store.close();
  });

  it('lists and shows the records, as text and JSON', async () => {
    const list = await tsbm(['list', '--state', setting]);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^NODE\s+STATE\s+PROTECTED\s+IMAGE/);
    expect(list.stdout).toMatch(/node01\s+active\s+no\s+oci:\/\/reg\/os:42/);
    expect(list.stdout).toMatch(/node02\s+deploy failed\s+no\s+-/);
    const json = JSON.parse((await tsbm(['list', '-o', 'json'], { TSBM_STATE: setting })).stdout);
    expect(json.map((r: { name: string }) => r.name)).toEqual(['node01', 'node02']);
    const show = await tsbm(['show', 'node02', '--state', setting]);
    expect(show.stdout).toMatch(/state:\s+deploy failed/);
    expect(show.stdout).toMatch(/last error:\s+pull failed/);
    const byAddress = JSON.parse((await tsbm(['show', 'https://10.0.0.5/', '--state', setting, '-o', 'json'])).stdout);
    expect(byAddress).toMatchObject({ name: 'node01', image: 'oci://reg/os:42' });
    const missing = await tsbm(['show', 'node09', '--state', setting]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^tsbm: error: no node record for node09 in (files in|etcd at) /);
  });

  it('protects and unprotects; refused while a run holds the node', async () => {
    const p = await tsbm(['protect', 'node01', '--reason', 'customer database', '--state', setting]);
    expect(p.stdout).toBe('node01 (bmc:10.0.0.5:443): protected (customer database)\n');
    expect((await tsbm(['show', 'node01', '--state', setting])).stdout).toMatch(/protected:\s+yes \(customer database\)/);
    // A machine with no record yet, named by its BMC address.
    expect((await tsbm(['protect', 'https://10.0.0.7', '--state', setting])).stdout).toBe('https://10.0.0.7 (bmc:10.0.0.7:443): protected\n');
    const store = await openNodeStore(parseStoreSetting(setting, 'test', undefined));
    const held = await store.acquire([{ host: 'node01', key: 'bmc:10.0.0.5:443' }], 'run-2');
    const refused = await tsbm(['unprotect', 'node01', '--state', setting]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^tsbm: error: \[node01\] host node01 is locked by run run-2 .*a run is driving this node/);
    await held.release();
    await store.close();
    expect((await tsbm(['unprotect', 'node01', '--state', setting])).stdout).toBe('node01 (bmc:10.0.0.5:443): not protected\n');
  });

  it('sets a provision state by hand: the error goes with a state that is no longer failed, a bad state is exit 5', async () => {
    expect((await tsbm(['set-state', 'node02', 'available', '--state', setting])).stdout).toBe('node02 (bmc:10.0.0.6:443): available\n');
    const shown = JSON.parse((await tsbm(['show', 'node02', '-o', 'json', '--state', setting])).stdout);
    expect(shown).toMatchObject({ provisionState: 'available', runId: 'run-1' });
    expect(shown.lastError).toBeUndefined();
    await tsbm(['set-state', 'node02', 'unknown', '--reason', 'BMC replaced', '--state', setting]);
    expect(JSON.parse((await tsbm(['show', 'node02', '-o', 'json', '--state', setting])).stdout)).toMatchObject({ provisionState: 'unknown', lastError: 'BMC replaced' });
    const bad = await tsbm(['set-state', 'node02', 'deployed', '--state', setting]);
    expect(bad.code).toBe(5);
    expect(bad.stderr).toMatch(/^tsbm: error: "deployed" is not a provision state \(one of: available, deploying, active, deploy failed, undeploying, unknown\)/);
  });
});

describe('tsbm nodes: store settings that cannot work', () => {
  it('an etcd that does not answer: one line, exit 1', async () => {
    const r = await tsbm(['list', '--state', 'etcd://127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tsbm: error: the node store etcd at http:\/\/127\.0\.0\.1:1 did not answer: .*nothing was touched/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('the state setting from tsbm.cfg, below TSBM_STATE and --state', async () => {
    const cfg = join(dir, 'tsbm.cfg');
    writeFileSync(cfg, `[defaults]\nstate = files:${join(dir, 'state')}\n`);
    const fromFile = await tsbm(['list'], { TSBM_CONFIG: cfg });
    expect(fromFile.stderr).toBe('');
    expect(fromFile.stdout).toMatch(/node01\s+active/);
    writeFileSync(cfg, '[defaults]\nstate = consul://x\n');
    const bad = await tsbm(['list'], { TSBM_CONFIG: cfg });
    expect(bad.code).toBe(5);
    expect(bad.stderr).toMatch(/^tsbm: error: \S*tsbm\.cfg:2: "consul:\/\/x" is not a node store/);
    // The environment and the flag come first.
    expect((await tsbm(['list'], { TSBM_CONFIG: cfg, TSBM_STATE: `files:${join(dir, 'state')}` })).code).toBe(0);
    expect((await tsbm(['list', '--state', `files:${join(dir, 'state')}`], { TSBM_CONFIG: cfg })).code).toBe(0);
  });

  it('a setting that does not parse: exit 5 naming where it came from', async () => {
    const r = await tsbm(['list'], { TSBM_STATE: 'consul://x' });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/^tsbm: error: TSBM_STATE: "consul:\/\/x" is not a node store/);
  });
});
