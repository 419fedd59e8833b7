// image_download_source: local for bootc deploys, the parts that need no root: a controller
// without docker-registry fails the preflight naming the package, with nothing touched (on the
// simulated lab); the mirror is filled from a real docker-registry with token auth (as quay.io or
// Harbor) once for three nodes asking at the same time, each blob fetched once (counted in that
// registry's access log), only the nodes' platform of a multi-arch index; wrong credentials say
// so; a wildcard bind address is refused; the ramdisk's registries.conf drop-in marks only the
// mirror plain HTTP; --check starts no mirror and fills nothing.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registriesConf } from '../../src/modules/bootc/containers-conf.js';
import { downloadSource, imageMirrorFor } from '../../src/modules/bootc/image-mirror.js';
import { parseImageSource } from '../../src/module-api/image-ref.js';
import { type OciMirror, startOciMirror } from '../../src/images/oci-mirror.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { haveTool } from '../e2e/lab/run.js';
import { startTokenRegistry, type TokenRegistry } from '../e2e/lab/token-registry.js';
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
    const r = await runTsbm(
      [
        'run',
        DEPLOY,
        '-i',
        lab.inventory,
        '--output',
        'json',
        '-e',
        'image_download_source=local',
        ...state.args,
      ],
      {
        cwd: dir,
        env: { ...state.env, PATH: join(dir, 'no-programs-here') },
        timeoutMs: 120_000,
      },
    );
    expect(r.code, r.stderr).toBe(2);
    for (const n of lab.nodes) {
      const f = failuresOf(r).get(n.cfg.name);
      expect(f?.task).toBe('Check the node before touching it (BMC, image, ISO)');
      expect(f?.msg).toMatch(
        /^mirror: image_download_source: local serves bootc images from an image mirror on the controller, and docker-registry is not on this controller's PATH \(install Debian's docker-registry package on the controller \(apt-get install docker-registry.*\); nothing was touched$/,
      );
      expect(n.bmc!.state.resets).toEqual([]);
    }
  }, 150_000);

  it('--check plans the mirror: no registry process started, nothing filled; the plan says the pull would go through it', async () => {
    // A docker-registry that records being started (and fails, as a broken one would): check
    // mode may find it on the PATH, never run it.
    const bin = join(dir, 'probe-bin');
    const started = join(dir, 'docker-registry-started');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'docker-registry'), `#!/bin/sh\necho "$@" >> '${started}'\nexit 1\n`, { mode: 0o755 });
    const state = stateArgs(dir);
    const env = { ...state.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
    // node01 runs the ramdisk already, so its pull is planned by podman_pull itself; node02 is off.
    const boot = join(dir, 'boot.yml');
    writeFileSync(boot, '- hosts: node01\n  gather_facts: false\n  tasks:\n    - import_role: {name: boot-ramdisk}\n    - import_role: {name: wait-agent}\n');
    const up = await runTsbm(['run', boot, '-i', lab.inventory, '--output', 'json', ...state.args], { cwd: dir, env, timeoutMs: 120_000 });
    expect(up.code, up.stderr).toBe(0);
    const requests = lab.registry.requests.length;
    const r = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--check', '--output', 'json', '-e', 'image_download_source=local', ...state.args], { cwd: dir, env, timeoutMs: 120_000 });
    expect(existsSync(started), 'docker-registry was started in check mode').toBe(false);
    expect(r.code, `${r.stderr}\n${r.stdout.slice(-3000)}`).toBe(0);
    // Nothing filled: the registry was asked for manifests by the preflight, never for a blob.
    expect(lab.registry.requests.slice(requests).filter((q) => q.includes('/blobs/'))).toEqual([]);
    const result = (host: string, task: string) => r.events.find((e) => e.type === 'host_result' && e.host === host && e.task === task);
    for (const h of ['node01', 'node02']) {
      expect(result(h, 'Check the node before touching it (BMC, image, ISO)')?.msg).toMatch(
        /image mirror for registry\.sim\.tsbm:5000 would start on 127\.0\.0\.1 \(a free port\) \(.*probe-bin\/docker-registry\) and be filled once from the registry; check mode starts and fills nothing/,
      );
    }
    expect(result('node01', 'Pull the image')).toMatchObject({
      status: 'changed',
      msg: "would pull registry.sim.tsbm:5000/tsbm/bootc-demo:latest through the run's image mirror for registry.sim.tsbm:5000 (the controller fills it once from the registry)",
    });
    expect(result('node02', 'Pull the image')?.msg).toMatch(/^would run after boot: podman_pull/);
  }, 150_000);
});

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Pushes blobs and a manifest with the registry's own API (a token with push scope). */
async function push(
  reg: TokenRegistry,
  repo: string,
  ref: string,
  mediaType: string,
  manifest: Buffer,
  blobs: Buffer[],
): Promise<void> {
  const ch = (await fetch(`http://${reg.address}/v2/`)).headers.get('www-authenticate') ?? '';
  const realm = /realm="([^"]+)"/.exec(ch)?.[1] ?? '';
  const service = /service="([^"]+)"/.exec(ch)?.[1] ?? '';
  const basic = `Basic ${Buffer.from(`${reg.user}:${reg.password}`).toString('base64')}`;
  const tok = (await (
    await fetch(`${realm}?service=${service}&scope=repository:${repo}:pull,push`, {
      headers: { authorization: basic },
    })
  ).json()) as { token: string };
  const auth = { authorization: `Bearer ${tok.token}` };
  for (const b of blobs) {
    const started = await fetch(`http://${reg.address}/v2/${repo}/blobs/uploads/`, {
      method: 'POST',
      headers: auth,
    });
    const u = new URL(started.headers.get('location') ?? '', `http://${reg.address}`);
    u.searchParams.set('digest', sha(b));
    const put = await fetch(u, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(b),
    });
    if (put.status !== 201) throw new Error(`push blob: ${put.status} ${await put.text()}`);
  }
  const m = await fetch(`http://${reg.address}/v2/${repo}/manifests/${ref}`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': mediaType },
    body: new Uint8Array(manifest),
  });
  if (m.status !== 201) throw new Error(`push manifest: ${m.status} ${await m.text()}`);
}

/** A one-layer image: its config and layer (random, so nothing is shared between images), its manifest. */
function image(layerBytes: number) {
  const layer = Buffer.from(Array.from({ length: layerBytes }, () => Math.floor(Math.random() * 256)));
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      rootfs: { type: 'layers', diff_ids: [sha(layer)] },
      salt: Math.random(),
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: sha(config),
        size: config.length,
      },
      layers: [
        { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: sha(layer), size: layer.length },
      ],
    }),
  );
  return { layer, config, manifest, blobs: [config, layer] };
}

const canRegistry = ['docker-registry', 'openssl'].every(haveTool);

describe.skipIf(!canRegistry)(
  'the mirror is filled once per run from a registry with token auth (needs docker-registry, openssl)',
  () => {
    let dir: string;
    let reg: TokenRegistry;
    let mirror: OciMirror;
    const single = image(300_000);
    const amd = image(200_000);
    const arm = image(250_000);
    let index: Buffer;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tsbm-mirror-fill-'));
      reg = await startTokenRegistry(join(dir, 'upstream'), '127.0.0.1', 21000 + (process.pid % 9000));
      await push(
        reg,
        'os/bootc',
        'v1',
        'application/vnd.oci.image.manifest.v1+json',
        single.manifest,
        single.blobs,
      );
      await push(
        reg,
        'os/multi',
        sha(amd.manifest),
        'application/vnd.oci.image.manifest.v1+json',
        amd.manifest,
        amd.blobs,
      );
      await push(
        reg,
        'os/multi',
        sha(arm.manifest),
        'application/vnd.oci.image.manifest.v1+json',
        arm.manifest,
        arm.blobs,
      );
      index = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: 'application/vnd.oci.image.index.v1+json',
          manifests: [
            {
              mediaType: 'application/vnd.oci.image.manifest.v1+json',
              digest: sha(amd.manifest),
              size: amd.manifest.length,
              platform: { os: 'linux', architecture: 'amd64' },
            },
            {
              mediaType: 'application/vnd.oci.image.manifest.v1+json',
              digest: sha(arm.manifest),
              size: arm.manifest.length,
              platform: { os: 'linux', architecture: 'arm64' },
            },
          ],
        }),
      );
      await push(reg, 'os/multi', 'latest', 'application/vnd.oci.image.index.v1+json', index, []);
      mirror = await startOciMirror({
        registry: reg.address,
        upstreamUrl: `http://${reg.address}`,
        credentials: { username: reg.user, password: reg.password },
        tlsVerify: false,
        host: '127.0.0.1',
        port: 0,
      });
    }, 60_000);
    afterAll(async () => {
      await mirror?.stop();
      await reg?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const fromMirror = (path: string, accept?: string) =>
      fetch(`http://${mirror.address}${path}`, {
        headers: {
          authorization: `Basic ${Buffer.from(`${mirror.username}:${mirror.password}`).toString('base64')}`,
          ...(accept ? { accept } : {}),
        },
      });

    it('three nodes asking at once: one copy, each blob sent by the registry once, then served by the mirror', async () => {
      const before = reg.blobGets();
      const results = await Promise.all([1, 2, 3].map(() => mirror.fill('os/bootc', 'v1', 'amd64')));
      expect(results[0]).toEqual({
        digest: sha(single.manifest),
        blobsCopied: 2,
        bytesCopied: single.config.length + single.layer.length,
        size: { compressed: single.config.length + single.layer.length, layers: 1 },
      });
      expect(results[1]).toBe(results[0]);
      // A later node: nothing more is fetched.
      await mirror.fill('os/bootc', 'v1', 'amd64');
      const after = reg.blobGets();
      for (const b of single.blobs)
        expect((after.get(sha(b)) ?? 0) - (before.get(sha(b)) ?? 0), sha(b)).toBe(1);
      const m = await fromMirror('/v2/os/bootc/manifests/v1', 'application/vnd.oci.image.manifest.v1+json');
      expect(m.status).toBe(200);
      expect(Buffer.from(await m.arrayBuffer()).equals(single.manifest)).toBe(true);
      const layer = await fromMirror(`/v2/os/bootc/blobs/${sha(single.layer)}`);
      expect(Buffer.from(await layer.arrayBuffer()).equals(single.layer)).toBe(true);
      // Without the run's login the mirror serves nothing.
      expect((await fetch(`http://${mirror.address}/v2/os/bootc/manifests/v1`)).status).toBe(401);
    });

    it("the nodes' login can only pull: a PUT of a manifest, a blob upload and a DELETE are refused, the tag still serves the filled digest", async () => {
      const filled = await mirror.fill('os/bootc', 'v1', 'amd64');
      const auth = { authorization: `Basic ${Buffer.from(`${mirror.username}:${mirror.password}`).toString('base64')}` };
      const other = Buffer.from(JSON.stringify({ ...JSON.parse(single.manifest.toString('utf8')), annotations: { evil: 'yes' } }));
      const put = await fetch(`http://${mirror.address}/v2/os/bootc/manifests/v1`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
        body: other,
      });
      expect(put.status).toBe(405);
      const newTag = await fetch(`http://${mirror.address}/v2/os/bootc/manifests/evil`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
        body: other,
      });
      expect(newTag.status).toBe(405);
      const upload = await fetch(`http://${mirror.address}/v2/os/bootc/blobs/uploads/`, { method: 'POST', headers: auth });
      expect(upload.status).toBe(405);
      for (const path of [`/v2/os/bootc/manifests/${filled.digest}`, `/v2/os/bootc/blobs/${sha(single.layer)}`]) {
        const del = await fetch(`http://${mirror.address}${path}`, { method: 'DELETE', headers: auth });
        expect(del.status, path).toBe(405);
      }
      const m = await fromMirror('/v2/os/bootc/manifests/v1', 'application/vnd.oci.image.manifest.v1+json');
      expect(m.headers.get('docker-content-digest')).toBe(filled.digest);
      expect((await fromMirror(`/v2/os/bootc/manifests/${filled.digest}`, 'application/vnd.oci.image.manifest.v1+json')).status).toBe(200);
      expect((await fromMirror(`/v2/os/bootc/blobs/${sha(single.layer)}`)).status).toBe(200);
    });

    it("a multi-arch index by tag: only the nodes' platform is fetched, its manifest served under the tag", async () => {
      const before = reg.blobGets();
      const r = await mirror.fill('os/multi', 'latest', 'arm64');
      expect(r.digest).toBe(sha(arm.manifest));
      const after = reg.blobGets();
      for (const b of arm.blobs) expect((after.get(sha(b)) ?? 0) - (before.get(sha(b)) ?? 0)).toBe(1);
      for (const b of amd.blobs) expect(after.get(sha(b)) ?? 0).toBe(before.get(sha(b)) ?? 0);
      const m = await fromMirror(
        '/v2/os/multi/manifests/latest',
        'application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json',
      );
      expect(m.headers.get('docker-content-digest')).toBe(sha(arm.manifest));
    });

    it('the same tag for nodes of another architecture is refused with what to do (one tag serves one platform)', async () => {
    const err = (await mirror.fill('os/multi', 'latest', 'amd64').catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toMatch(/os\/multi:latest is served by the image mirror for arm64 nodes, and this node is amd64/);
    expect(err.hint).toMatch(/by digest/);
  });

  it('an index named by its digest is stored whole, so the nodes pull it by that digest', async () => {
      await mirror.fill('os/multi', sha(index), 'amd64');
      const m = await fromMirror(
        `/v2/os/multi/manifests/${sha(index)}`,
        'application/vnd.oci.image.index.v1+json',
      );
      expect(m.status).toBe(200);
      expect(Buffer.from(await m.arrayBuffer()).equals(index)).toBe(true);
    });

    it('wrong credentials: the registry named, what to fix, no password in the message', async () => {
      const wrong = await startOciMirror({
        registry: reg.address,
        upstreamUrl: `http://${reg.address}`,
        credentials: { username: reg.user, password: 'Wr0ng-pull-pw' },
        tlsVerify: false,
        host: '127.0.0.1',
        port: 0,
      });
      try {
        const err = (await wrong.fill('os/bootc', 'v1', 'amd64').catch((e: unknown) => e)) as Error & {
          hint?: string;
        };
        expect(err.message).toMatch(
          new RegExp(
            `registry ${reg.address.replace(/\./g, '\\.')}: its token service 127\\.0\\.0\\.1:\\d+ answered 401`,
          ),
        );
        expect(err.hint).toMatch(/image_pull_secret/);
        expect(`${err.message}${err.hint}`).not.toContain('Wr0ng-pull-pw');
      } finally {
        await wrong.stop();
      }
    });

    it("the mirror's directory (its login, the image) is gone after stop()", async () => {
      const other = await startOciMirror({
        registry: reg.address,
        upstreamUrl: `http://${reg.address}`,
        tlsVerify: false,
        host: '127.0.0.1',
        port: 0,
      });
      const mine = readdirSync(tmpdir()).filter(
        (f) =>
          f.startsWith('tsbm-mirror-') &&
          !f.startsWith('tsbm-mirror-fill-') &&
          !f.startsWith('tsbm-mirror-sim-'),
      );
      expect(mine.length).toBeGreaterThan(0);
      await other.stop();
      const left = mine.filter((f) => existsSync(join(tmpdir(), f)));
      expect(left.length).toBe(mine.length - 1);
    });
  },
);

describe('the mirror refuses what cannot work, before anything starts', () => {
  const img = parseImageSource('oci://registry.lab:5000/os/bootc:1');
  const ctxWith = (vars: Record<string, unknown>) => makeCtx(vars, { services: new TestServices() });

  it('a wildcard address is refused: the mirror listens only where the ramdisks reach it', () => {
    const t = ctxWith({ image_mirror_address: '0.0.0.0' });
    expect(() => imageMirrorFor(t.ctx, img, undefined, true)).toThrow(
      /image_mirror_address 0\.0\.0\.0 is a wildcard/,
    );
  });

  it('image_download_source is http or local', () => {
    expect(downloadSource({})).toBe('http');
    expect(downloadSource({ instance_info: { image_download_source: 'local' } })).toBe('local');
    expect(() => downloadSource({ image_download_source: 'nfs' })).toThrow(/neither http nor local/);
  });

  it("the ramdisk's drop-in marks only the mirror plain HTTP, the registry keeps its TLS", () => {
    const conf = registriesConf(
      [{ prefix: 'quay.io', mirrors: ['10.0.0.1:40123'], insecureMirrors: true }],
      [],
    );
    expect(conf).toBe(
      '# written by tsbm\n\n[[registry]]\nlocation = "quay.io"\n\n[[registry.mirror]]\nlocation = "10.0.0.1:40123"\ninsecure = true\n',
    );
  });
});
