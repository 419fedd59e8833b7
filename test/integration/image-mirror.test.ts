// image_download_source: local for bootc deploys, the parts that need no root: a controller
// without docker-registry fails the preflight naming the package, with nothing touched (on the
// simulated lab); a registry asking for Basic auth is refused up front (docker-registry's proxy
// only logs in to token services); a wildcard bind address is refused; the ramdisk's
// registries.conf drop-in marks only the mirror plain HTTP.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { registriesConf } from '../../src/deploy/containers-conf.js';
import { downloadSource, imageMirrorFor } from '../../src/deploy/image-mirror.js';
import { parseImageSource } from '../../src/deploy/image-ref.js';
import { type Lab, startLab } from '../../src/sim/lab/lab.js';
import { haveTool } from '../e2e/lab/run.js';
import { DEPLOY, failuresOf, runTsbm, stateArgs } from '../helpers/fault-cli.js';
import { makeCtx, TestServices } from './redfish-helpers.js';

describe('image_download_source: local on the simulated lab', () => {
  let dir: string;
  let lab: Lab;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-mirror-sim-'));
    lab = await startLab({ nodes: 2, dir: join(dir, 'lab'), bootDelayMs: 150, powerDelayMs: 30 });
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('without docker-registry on the controller: one clear preflight line naming the package; nothing touched', async () => {
    const state = stateArgs(dir);
    const r = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', '-e', 'image_download_source=local', ...state.args], {
      cwd: dir,
      env: { ...state.env, PATH: join(dir, 'no-programs-here') },
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(2);
    for (const n of lab.nodes) {
      const f = failuresOf(r).get(n.cfg.name);
      expect(f?.task).toBe('Check the node before touching it (BMC, image, ISO)');
      expect(f?.msg).toMatch(/: mirror: image_download_source: local serves bootc images through a pull-through mirror, and docker-registry is not on this controller's PATH \(install Debian's docker-registry package on the controller \(apt-get install docker-registry.*\); nothing was touched$/);
      expect(n.bmc!.state.resets).toEqual([]);
    }
  }, 150_000);
});

describe('the mirror refuses what cannot work, before anything starts', () => {
  const img = parseImageSource('oci://registry.lab:5000/os/bootc:1');
  const ctxWith = (vars: Record<string, unknown>) => makeCtx(vars, { services: new TestServices() });

  it.skipIf(!haveTool('docker-registry'))('a registry asking for Basic auth: docker-registry would pull anonymously, so it is said up front', async () => {
    const basic = createServer((_q, res) => res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="lab"' }).end());
    await new Promise<void>((ok) => basic.listen(0, '127.0.0.1', () => ok()));
    const t = ctxWith({ registry_endpoints: { 'registry.lab:5000': `http://127.0.0.1:${(basic.address() as AddressInfo).port}` } });
    try {
      const err = (await imageMirrorFor(t.ctx, img, Buffer.from('me:S3cret-pull').toString('base64'), false).catch((e: unknown) => e)) as Error & { hint?: string };
      expect(err.message).toMatch(/registry registry\.lab:5000 \(http:\/\/127\.0\.0\.1:\d+\) asks for Basic auth; docker-registry's pull-through mirror only logs in to registries with token auth/);
      expect(err.hint).toMatch(/image_download_source: http/);
      expect(JSON.stringify([err.message, err.hint, t.emitted()])).not.toContain('S3cret-pull');
    } finally {
      basic.close();
      await t.close();
    }
  });

  it('a wildcard address is refused: the mirror listens only where the ramdisks reach it', () => {
    const t = ctxWith({ image_mirror_address: '0.0.0.0' });
    expect(() => imageMirrorFor(t.ctx, img, undefined, true)).toThrow(/image_mirror_address 0\.0\.0\.0 is a wildcard/);
  });

  it('image_download_source is http or local', () => {
    expect(downloadSource({})).toBe('http');
    expect(downloadSource({ instance_info: { image_download_source: 'local' } })).toBe('local');
    expect(() => downloadSource({ image_download_source: 'nfs' })).toThrow(/neither http nor local/);
  });

  it("the ramdisk's drop-in marks only the mirror plain HTTP, the registry keeps its TLS", () => {
    const conf = registriesConf([{ prefix: 'quay.io', mirrors: ['10.0.0.1:40123'], insecureMirrors: true }], []);
    expect(conf).toBe('# written by tsbm\n\n[[registry]]\nlocation = "quay.io"\n\n[[registry.mirror]]\nlocation = "10.0.0.1:40123"\ninsecure = true\n');
  });
});
