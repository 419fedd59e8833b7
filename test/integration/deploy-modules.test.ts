// The deploy modules against a simulated ramdisk over real SSH: one node of the simulated lab,
// with the lab's ramdisk tools (packages/lab/ramdisk) on its PATH (deploy-sim-context.ts).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bootcInstallModule } from '../../src/modules/bootc/bootc_install.js';
import { rememberImageSize, sizesFromManifest } from '../../src/modules/bootc/image-size-known.js';
import type { ModuleContext } from '../../src/module-api/types.js';
import { podmanPullModule } from '../../src/modules/bootc/podman_pull.js';
import { rootDeviceModule } from '../../src/modules/disk/root_device.js';
import { waitAgentModule } from '../../src/modules/ramdisk/wait_agent.js';
import { onNode, ranSteps, type SimNode, type SimNodeOptions, startSimNode } from './deploy-sim-context.js';

const PASSWORD = 'Sup3r-s3cret-pw';
const TOKEN = Buffer.from(`tester:${PASSWORD}`).toString('base64');
const IMAGE = 'oci://10.88.0.1:5001/bootc/test:1';
const REF = '10.88.0.1:5001/bootc/test:1';

let node: SimNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

const read = (n: SimNode, f: string) => readFileSync(path.join(n.state, f), 'utf8');
// Paths on the node; the tests look at them in its sandbox (n.root).
const pullArgs = (_n: SimNode, extra: Record<string, unknown> = {}) => ({
  auth_dir: '/run/tsbm',
  containers_conf_dir: '/etc/containers/containers.conf.d',
  registries_conf_dir: '/etc/containers/registries.conf.d',
  meminfo_path: '/proc/meminfo',
  ...extra,
});
const MEMINFO = 'MemTotal: 16000000 kB\nMemAvailable:   8000000 kB\n';

/** The node's context in a run whose deploy preflight read REF's manifest on the controller. */
function afterPreflight(n: SimNode, vars: Record<string, unknown>, compressed: number): ModuleContext {
  const kept = new Map<string, unknown>();
  const services = {
    ...n.ctx(vars).services,
    get: <T>(k: string, create: () => T): T => {
      if (!kept.has(k)) kept.set(k, create());
      return kept.get(k) as T;
    },
  };
  const manifest = JSON.stringify({ schemaVersion: 2, config: { size: 1024 }, layers: [{ size: compressed - 1024 }] });
  rememberImageSize(services, REF, sizesFromManifest(manifest, async () => undefined));
  return { ...n.ctx(vars), services };
}

function assertNoSecret(n: SimNode, ...texts: unknown[]) {
  for (const c of ranSteps(n.host.commands)) {
    expect(c).not.toContain(PASSWORD);
    expect(c).not.toContain(TOKEN);
  }
  for (const t of [...texts, n.events]) {
    const s = JSON.stringify(t);
    expect(s).not.toContain(PASSWORD);
    expect(s).not.toContain(TOKEN);
  }
}

describe('root_device on a simulated ramdisk', () => {
  it('picks the only real disk, skipping the CD drive, with one lsblk call', async () => {
    node = await startSimNode({ diskMiB: 8192 });
    const r = await node.run(rootDeviceModule, {});
    expect(r).toMatchObject({
      changed: false,
      device: '/dev/vda',
      size_mib: 8192,
      size_bytes: 8192 * 1024 * 1024,
    });
    expect(r.reason).toMatch(/smallest disk of at least 4 GiB/);
    expect(ranSteps(node.host.commands).filter((c) => c.startsWith('lsblk'))).toEqual(['lsblk -J -b -O']);
  });
  it('instance_info.root_device hints are applied; no match lists every disk', async () => {
    node = await startSimNode({ diskMiB: 8192 });
    const ok = await node.run(
      rootDeviceModule,
      {},
      { instance_info: { root_device: { serial: 'SIM-node1', size: '>= 7' } } },
    );
    expect(ok.device).toBe('/dev/vda');
    await expect(
      node.run(rootDeviceModule, {}, { properties: { root_device: { size: '>= 100' } } }),
    ).rejects.toThrow(
      /node1: no disk matches root device hints size: ">= 100"; disks:[\s\S]*\/dev\/vda size=8GiB[\s\S]*serial=SIM-node1[\s\S]*\/dev\/sr0/,
    );
  });
});

describe('podman_pull on a simulated ramdisk', () => {
  it('pulls with a 0600 auth file that never reaches argv and is deleted; writes the no_pivot_root drop-in', async () => {
    node = await startSimNode({
      registryAuth: `tester:${PASSWORD}`,
      imageBytes: 104857600,
      meminfo: MEMINFO,
    });
    const r = await node.run(podmanPullModule, pullArgs(node), {
      instance_info: { image_source: IMAGE, image_pull_secret: TOKEN },
    });
    expect(r).toMatchObject({ changed: true, ref: REF, registry: '10.88.0.1:5001' });
    // From the pull's own output: no `podman image inspect` after it.
    expect(r.image_id).toBe(createHash('sha256').update(REF).digest('hex'));
    expect(ranSteps(node.host.commands).some((c) => c.includes('image inspect'))).toBe(false);
    const authfile = read(node, 'last-authfile').trim();
    const authfileOnNode = onNode(node, authfile);
    expect(authfile).toMatch(new RegExp(`^${node.root}/run/tsbm/auth-[a-z0-9]+\\.json$`));
    expect(existsSync(authfile)).toBe(false);
    expect(readdirSync(path.join(node.root, 'run/tsbm'))).toEqual([]);
    const pull = ranSteps(node.host.commands).find((c) => c.startsWith('podman pull') && !c.includes('--help'));
    expect(pull).toBe(`podman pull --authfile ${onNode(node, authfile)} ${REF}`); // Debian's 4.3: no --retry-delay
    const rmIdx = ranSteps(node.host.commands).indexOf(`rm -f ${onNode(node, authfile)}`);
    expect(rmIdx).toBeGreaterThan(ranSteps(node.host.commands).indexOf(pull as string));
    expect(
      readFileSync(path.join(node.root, 'etc/containers/containers.conf.d/zz-tsbm-ramdisk.conf'), 'utf8'),
    ).toMatch(/\[engine\]\nno_pivot_root = true/);
    // podman 4.3 has no flags on `manifest inspect`: the preflight still got the size,
    // with the credentials passed through REGISTRY_AUTH_FILE (a path, not the secret).
    expect(
      node.events.some((e) => e.kind === 'log' && /101 MiB compressed in 1 layers/.test(e.message)),
    ).toBe(true);
    expect(
      ranSteps(node.host.commands).some(
        (c) => c.includes(`REGISTRY_AUTH_FILE=${authfileOnNode}`) && c.includes('podman manifest inspect'),
      ),
    ).toBe(true);
    assertNoSecret(node, r);
    expect(node.redactor.redact(`x ${TOKEN} ${PASSWORD} y`)).toBe('x ******** ******** y');
  });
  it('with the size the preflight read on the controller: no manifest probe, no image inspect, two round trips', async () => {
    node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, imageBytes: 104857600, meminfo: MEMINFO });
    const vars = { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN } };
    const r = await podmanPullModule.run(afterPreflight(node, vars, 50 * 1048576), pullArgs(node));
    // The catalogue's ID, from the pull's own output.
    expect(r).toMatchObject({ changed: true, ref: REF, image_id: createHash('sha256').update(REF).digest('hex'), compressed_bytes: 50 * 1048576 });
    expect(node.events.some((e) => e.kind === 'log' && /50 MiB compressed in 1 layers; needs ~\d+ MiB, ramdisk has 7813 MiB/.test(e.message))).toBe(true);
    const ran = ranSteps(node.host.commands);
    expect(ran.filter((c) => /manifest inspect|skopeo inspect|image inspect/.test(c))).toEqual([]);
    // The directories with the ramdisk's facts; the drop-ins, the auth file (on the pull's
    // stdin), the pull and the auth file's removal: two round trips, no file transfer.
    expect(node.host.commands).toHaveLength(2);
    expect(node.host.server.sftpRequests).toBe(0);
    expect(node.host.commands.some((c) => c.includes('tsbm-put'))).toBe(false);
    const authfile = onNode(node, read(node, 'last-authfile').trim());
    expect(ran.some((c) => c.endsWith(`podman pull --authfile ${authfile} ${REF}`))).toBe(true);
    expect(read(node, 'last-authfile-mode').trim()).toBe('600');
    expect(ran).toContain(`rm -f ${authfile}`);
    expect(readFileSync(path.join(node.root, 'etc/containers/containers.conf.d/zz-tsbm-ramdisk.conf'), 'utf8')).toMatch(/\[engine\]\nno_pivot_root = true/);
    expect(readdirSync(path.join(node.root, 'etc/containers/containers.conf.d'))).toEqual(['zz-tsbm-ramdisk.conf']);
    expect(readdirSync(path.join(node.root, 'run/tsbm'))).toEqual([]);
    assertNoSecret(node, r);
  });
  it("with wait_agent's facts (architecture, MemAvailable, podman version) too: the pull is one round trip", async () => {
    node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, imageBytes: 104857600, meminfo: MEMINFO });
    const facts = { ramdisk_podman_version: 'podman version 4.3.1', ramdisk_arch: 'x86_64', ramdisk_mem_available_bytes: String(8000000 * 1024) };
    const vars = { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN }, facts };
    const r = await podmanPullModule.run(afterPreflight(node, vars, 50 * 1048576), pullArgs(node));
    expect(r).toMatchObject({ changed: true, ref: REF, image_id: createHash('sha256').update(REF).digest('hex') });
    expect(node.host.commands).toHaveLength(1);
    expect(node.events.some((e) => e.kind === 'log' && /50 MiB compressed in 1 layers; needs ~\d+ MiB, ramdisk has 7813 MiB/.test(e.message))).toBe(true);
    expect(read(node, 'last-authfile-mode').trim()).toBe('600');
    expect(readdirSync(path.join(node.root, 'run/tsbm'))).toEqual([]);
    expect(readFileSync(path.join(node.root, 'etc/containers/containers.conf.d/zz-tsbm-ramdisk.conf'), 'utf8')).toMatch(/no_pivot_root = true/);
    assertNoSecret(node, r);
  });
  it("wait_agent's MemAvailable refuses a pull the ramdisk has no memory for, with nothing run on the ramdisk", async () => {
    node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO });
    const facts = { ramdisk_podman_version: 'podman version 4.3.1', ramdisk_arch: 'x86_64', ramdisk_mem_available_bytes: String(1024 ** 3) };
    const vars = { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN }, facts };
    await expect(podmanPullModule.run(afterPreflight(node, vars, 2 * 1024 ** 3), pullArgs(node))).rejects.toThrow(
      /not enough memory to pull .*MemAvailable is 1024 MiB/,
    );
    expect(node.host.commands).toEqual([]);
  });
  it('the size the preflight read still refuses a pull the ramdisk has no memory for, before anything is written there', async () => {
    node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, meminfo: 'MemAvailable:  1048576 kB\n' });
    const vars = { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN } };
    await expect(podmanPullModule.run(afterPreflight(node, vars, 2 * 1024 ** 3), pullArgs(node))).rejects.toThrow(
      /not enough memory to pull .*needs about \d+ MiB \(compressed layers 2048 MiB.* MemAvailable is 1024 MiB/,
    );
    const ran = ranSteps(node.host.commands);
    expect(ran.some((c) => c.startsWith('podman pull') && !c.includes('--help'))).toBe(false);
    expect(ran.some((c) => /manifest inspect|skopeo inspect/.test(c))).toBe(false);
    expect(existsSync(path.join(node.root, 'etc/containers/containers.conf.d/zz-tsbm-ramdisk.conf'))).toBe(false);
    expect(readdirSync(path.join(node.root, 'run/tsbm'))).toEqual([]);
  });
  it('with skopeo installed, its manifest probe rides in the facts batch and podman is not asked', async () => {
    node = await startSimNode({
      meminfo: MEMINFO,
      tools: {
        skopeo: `#!/bin/sh\necho "$*" >> "$TSBM_SIM_ROOT/sim/skopeo-args"\necho '{"schemaVersion":2,"config":{"size":1024},"layers":[{"size":52428800}]}'\n`,
      },
    });
    const r = await node.run(podmanPullModule, pullArgs(node), { instance_info: { image_source: IMAGE } });
    expect(r).toMatchObject({ changed: true, ref: REF });
    expect(read(node, 'skopeo-args').trim()).toBe(`inspect --raw docker://${REF}`);
    expect(node.events.some((e) => e.kind === 'log' && /51 MiB compressed in 1 layers/.test(e.message))).toBe(true);
    expect(ranSteps(node.host.commands).some((c) => c.includes('podman manifest inspect'))).toBe(false);
    // Directories (with the skopeo check), facts with the skopeo probe, the pull.
    expect(node.host.commands).toHaveLength(3);
  });
  it('a ramdisk without SFTP: the auth file (0600, on stdin only) arrives piped, the drop-ins in a batch, and the auth file is gone', async () => {
    node = await startSimNode({ sftp: false, registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO });
    const r = await node.run(podmanPullModule, pullArgs(node, { tls_verify: false }), {
      instance_info: { image_source: IMAGE, image_pull_secret: TOKEN },
    });
    expect(r).toMatchObject({ changed: true, ref: REF });
    expect(node.host.server.sftpRequests).toBe(1);
    expect(read(node, 'last-authfile-mode').trim()).toBe('600');
    const authfile = read(node, 'last-authfile').trim();
    expect(existsSync(authfile)).toBe(false);
    expect(readdirSync(path.join(node.root, 'run/tsbm'))).toEqual([]);
    expect(
      readFileSync(path.join(node.root, 'etc/containers/containers.conf.d/zz-tsbm-ramdisk.conf'), 'utf8'),
    ).toMatch(/no_pivot_root = true/);
    expect(
      readFileSync(path.join(node.root, 'etc/containers/registries.conf.d/zz-tsbm-registries.conf'), 'utf8'),
    ).toContain('insecure = true');
    // The auth file went through the piped transfer script (the manifest probe before the pull
    // needs it); the drop-ins rode in the probe's batch.
    expect(node.host.commands.filter((c) => c.includes('tsbm-put'))).toHaveLength(1);
    assertNoSecret(node, r);
  });
  it('the auth file is written with mode 0600 (seen by podman at pull time)', async () => {
    node = await startSimNode({ meminfo: MEMINFO });
    await node.run(podmanPullModule, pullArgs(node, { memory_check: false }), {
      instance_info: { image_source: IMAGE, image_pull_secret: TOKEN },
    });
    expect(read(node, 'last-authfile-mode').trim()).toBe('600');
  });
  it('wrong pull secret: a clear auth error, auth file still deleted, secret absent', async () => {
    node = await startSimNode({
      registryAuth: 'tester:other',
      imageBytes: 1000,
      meminfo: MEMINFO,
    });
    const err = await node
      .run(podmanPullModule, pullArgs(node), {
        instance_info: { image_source: IMAGE, image_pull_secret: TOKEN },
      })
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/registry 10\.88\.0\.1:5001 refused|unauthorized/);
    expect(JSON.stringify(err)).not.toContain(TOKEN);
    expect(readdirSync(path.join(node.root, 'run/tsbm'))).toEqual([]);
    assertNoSecret(node, (err as Error).message);
  });
  it('a full auths JSON secret works too', async () => {
    node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO });
    const secret = JSON.stringify({ auths: { '10.88.0.1:5001': { auth: TOKEN } } });
    const r = await node.run(podmanPullModule, pullArgs(node), {
      instance_info: { image_source: IMAGE, image_pull_secret: secret },
    });
    expect(r.changed).toBe(true);
    // The registry gives no manifest: the preflight degrades to a warning.
    expect(node.events.some((e) => e.kind === 'warn' && /memory preflight skipped/.test(e.message))).toBe(
      true,
    );
    assertNoSecret(node, r);
  });
  it('--retry-delay=5s only when podman supports it; --tls-verify=false; mirrors drop-in', async () => {
    node = await startSimNode({ podmanVersion: '5.2.1', meminfo: MEMINFO });
    await node.run(
      podmanPullModule,
      pullArgs(node, {
        image: IMAGE,
        tls_verify: false,
        registries: [{ prefix: '10.88.0.1:5001', mirrors: ['mirror.lab:5000'], insecure: true }],
      }),
    );
    expect(ranSteps(node.host.commands)).toContain(`podman pull --retry-delay=5s --tls-verify=false ${REF}`);
    const conf = readFileSync(
      path.join(node.root, 'etc/containers/registries.conf.d/zz-tsbm-registries.conf'),
      'utf8',
    );
    expect(conf).toContain('location = "mirror.lab:5000"');
  });
  it("a ramdisk's own drop-in for the same registry: tsbm's sorts after it, podman reads tsbm's last", async () => {
    node = await startSimNode({ meminfo: MEMINFO });
    const regDir = path.join(node.root, 'etc/containers/registries.conf.d');
    const confDir = path.join(node.root, 'etc/containers/containers.conf.d');
    mkdirSync(regDir, { recursive: true });
    mkdirSync(confDir, { recursive: true });
    // As site-built ramdisks carry: the registry named without the mirror, and engine settings.
    writeFileSync(path.join(regDir, '99-site.conf'), '[[registry]]\nlocation = "10.88.0.1:5001"\n');
    writeFileSync(path.join(regDir, 'zz-site.conf'), '[[registry]]\nlocation = "10.88.0.1:5001"\n');
    writeFileSync(path.join(confDir, '99-site.conf'), '[engine]\nno_pivot_root = false\n');
    await node.run(podmanPullModule, pullArgs(node, { image: IMAGE, memory_check: false, registries: [{ prefix: '10.88.0.1:5001', mirrors: ['mirror.lab:5000'] }] }));
    // podman reads *.conf in byte order of the names; the last table for a registry wins.
    const order = (d: string) => readdirSync(d).filter((f) => f.endsWith('.conf')).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(order(regDir).at(-1)).toBe('zz-tsbm-registries.conf');
    expect(order(confDir).at(-1)).toBe('zz-tsbm-ramdisk.conf');
    expect(readFileSync(path.join(regDir, 'zz-tsbm-registries.conf'), 'utf8')).toContain('location = "mirror.lab:5000"');
    expect(node.events.filter((e) => e.kind === 'warn')).toEqual([]);
  });
  it("a ramdisk drop-in that still sorts after tsbm's and names the registry is warned about by name, and named when the pull fails", async () => {
    node = await startSimNode({ meminfo: MEMINFO, registryAuth: `tester:${PASSWORD}` });
    const regDir = path.join(node.root, 'etc/containers/registries.conf.d');
    mkdirSync(regDir, { recursive: true });
    writeFileSync(path.join(regDir, 'zzz-site.conf'), '# site mirror\n[[registry]]\nlocation = "10.88.0.1:5001"\n');
    // Sorts later but about another registry: no override of tsbm's.
    writeFileSync(path.join(regDir, 'zzzz-other.conf'), '[[registry]]\nlocation = "quay.io"\n');
    const err = await node
      .run(podmanPullModule, pullArgs(node, { image: IMAGE, memory_check: false, registries: [{ prefix: '10.88.0.1:5001', mirrors: ['mirror.lab:5000'] }] }))
      .catch((e: unknown) => e as Error);
    const warns = node.events.filter((e) => e.kind === 'warn').map((e) => e.message);
    expect(warns).toEqual([
      "/etc/containers/registries.conf.d/zzz-site.conf on the ramdisk sorts after tsbm's zz-tsbm-registries.conf: its [[registry]] entry for 10.88.0.1:5001 replaces tsbm's (the run's image mirror, insecure flags); rename it to sort before zz-tsbm-registries.conf or drop that entry from the ramdisk",
    ]);
    // The registry wants credentials the pull was not given: the hint names the file first.
    expect(err).toBeInstanceOf(Error);
    expect(JSON.stringify({ ...err, message: err.message })).toContain('zzz-site.conf');
  });
  it('the podman version wait_agent read decides --retry-delay: no podman --help is started', async () => {
    for (const [version, flag] of [
      ['podman version 5.2.1', '--retry-delay=5s '],
      ['podman version 4.3.1', ''],
    ] as const) {
      node = await startSimNode({ podmanVersion: '5.2.1', meminfo: MEMINFO });
      await node.run(podmanPullModule, pullArgs(node, { image: IMAGE, tls_verify: false }), { facts: { ramdisk_podman_version: version } });
      const ran = ranSteps(node.host.commands);
      expect(ran.some((c) => c.includes('podman pull --help'))).toBe(false);
      expect(ran).toContain(`podman pull ${flag}--tls-verify=false ${REF}`);
      await node.close();
    }
    node = await startSimNode({ meminfo: MEMINFO });
  });
  it('memory preflight: a clear error with needed vs available, nothing pulled', async () => {
    node = await startSimNode({
      imageBytes: 2 * 1024 ** 3,
      meminfo: 'MemAvailable:  1048576 kB\n',
    });
    await expect(node.run(podmanPullModule, pullArgs(node, { image: IMAGE }))).rejects.toThrow(
      /not enough memory to pull .*needs about \d+ MiB .* MemAvailable is 1024 MiB/,
    );
    expect(ranSteps(node.host.commands).some((c) => c.startsWith('podman pull') && !c.includes('--help'))).toBe(false);
  });
  it('requires oci://', async () => {
    node = await startSimNode();
    await expect(node.run(podmanPullModule, pullArgs(node, { image: 'quay.io/x:1' }))).rejects.toThrow(
      /not an OCI reference/,
    );
  });
  it('check mode changes nothing', async () => {
    node = await startSimNode();
    const r = await node.run(
      podmanPullModule,
      pullArgs(node, { image: IMAGE, pull_secret: TOKEN }),
      {},
      { check: true },
    );
    expect(r.msg).toMatch(/would pull/);
    expect(ranSteps(node.host.commands)).toEqual([]);
  });
});

describe('bootc_install on a simulated ramdisk', () => {
  async function pulled(opts: SimNodeOptions = {}, diskMiB = 8192, tools: Record<string, string> = {}): Promise<SimNode> {
    const n = await startSimNode({ diskMiB, registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO, ...opts, tools });
    await n.run(podmanPullModule, pullArgs(n, { memory_check: false }), {
      instance_info: { image_source: IMAGE, image_pull_secret: TOKEN },
    });
    return n;
  }

  it("runs IPA's command, writes a GPT, and the auth file was gone before the image ran", async () => {
    node = await pulled();
    const vars = {
      instance_info: { image_source: IMAGE, image_pull_secret: TOKEN },
      root: { device: '/dev/vda', size_mib: 8192, reason: 'x' },
    };
    const r = await bootcInstallModule.run(node.ctx(vars), {} as never);
    expect(r).toMatchObject({
      changed: true,
      device: '/dev/vda',
      root_size_mib: 8192 - 768,
      partition_table: 'gpt',
      partitions: 2,
    });
    expect(read(node, 'podman-run-args').trim().split('\n')).toEqual([
      '--rm',
      '--privileged',
      '--pid=host',
      '--pull=never',
      '-v',
      '/var/lib/containers:/var/lib/containers',
      '-v',
      '/dev:/dev',
      REF,
      'bootc',
      'install',
      'to-disk',
      '--wipe',
      '--skip-fetch-check',
      '--root-size=7424M',
      '--disable-selinux',
      '/dev/vda',
    ]);
    expect(existsSync(path.join(node.state, 'violations'))).toBe(false);
    const gpt = execFileSync('/usr/sbin/sgdisk', ['-p', node.disk], {
      encoding: 'utf8',
    });
    expect(gpt).toMatch(/EFI-SYSTEM/);
    // root = --root-size 7424 MiB = 15204352 sectors after the 512 MiB ESP (x86-64 root type, as bootc's)
    expect(gpt).toMatch(/\s2\s+1050624\s+16254975\s+7\.3 GiB\s+8304\s+root/);
    // The table was read with partx (a third of sfdisk's CPU), in the install's round trip.
    const partx = 'partx -P -o NR,START,SECTORS,NAME,SCHEME /dev/vda';
    expect(ranSteps(node.host.commands).filter((c) => /^(partx|sfdisk|sgdisk)\b/.test(c))).toEqual([partx]);
    // ... and ran on the node (the stand-in records its arguments, the disk as the sandbox's file).
    expect(read(node, 'partx-standin-args')).toContain(`-P -o NR,START,SECTORS,NAME,SCHEME ${node.disk}\n`);
    assertNoSecret(node, r);
  });
  it('a ramdisk without partx: the table is read with sfdisk --json instead', async () => {
    node = await pulled({}, 8192, { partx: '#!/bin/sh\necho "sh: partx: not found" >&2\nexit 127\n' });
    const r = await node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 8192, image: IMAGE });
    expect(r).toMatchObject({ partition_table: 'gpt', partitions: 2 });
    expect(ranSteps(node.host.commands).filter((c) => /^(partx|sfdisk|sgdisk)\b/.test(c))).toEqual([
      'partx -P -o NR,START,SECTORS,NAME,SCHEME /dev/vda',
      'sfdisk --json /dev/vda',
    ]);
    expect(read(node, 'sfdisk-standin-args')).toContain(`--json ${node.disk}\n`);
  });
  it('SELinux enforcing, tpm2, authorized keys via a 0600 /tmp file that is deleted, extra args', async () => {
    node = await pulled({ selinux: 'Enforcing' });
    const vars = {
      instance_info: {
        image_source: IMAGE,
        bootc_tpm2_luks: 'true',
        bootc_authorized_keys: 'ssh-ed25519 AAAAC3Nza test@lab',
      },
    };
    const r = await node.run(
      bootcInstallModule,
      { device: '/dev/vda', size_mib: 8192, extra_args: ['--karg=console=ttyS0'] },
      vars,
    );
    const args = read(node, 'podman-run-args').trim().split('\n');
    expect(args.slice(8, 12)).toEqual(['--security-opt', 'label=type:unconfined_t', '-v', '/tmp:/tmp']);
    expect(args).toContain('--block-setup=tpm2-luks');
    expect(args).not.toContain('--disable-selinux');
    const keysArg = args.find((a) => a.startsWith('--root-ssh-authorized-keys='));
    const keysFile = keysArg?.split('=')[1] as string;
    expect(keysFile).toMatch(/^\/tmp\/tsbm-authorized-keys-/);
    expect(existsSync(path.join(node.root, keysFile))).toBe(false);
    expect(args.slice(-2)).toEqual(['--karg=console=ttyS0', '/dev/vda']);
    expect(r.selinux).toBe(true);
  });
  it('an image without bootc gives a clear error', async () => {
    node = await pulled({ noBootc: true });
    await expect(
      node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 8192, image: IMAGE }),
    ).rejects.toThrow(/image 10\.88\.0\.1:5001\/bootc\/test:1 is not a bootc image/);
  });
  it('other failures show the tail of bootc output; the stand-in refuses other devices', async () => {
    node = await pulled();
    await expect(
      node.run(bootcInstallModule, { device: '/dev/sda', size_mib: 8192, image: IMAGE }),
    ).rejects.toThrow(/bootc install to-disk \/dev\/sda failed \(rc 1\):\n.*refusing to install to \S+\/dev\/sda: the simulated node only has \/dev\/vda/);
  });
  it('a disk too small for the unpacked image is refused before bootc wipes it', async () => {
    node = await pulled({ imageBytes: 300 * 1024 * 1024 }, 1024);
    await expect(
      node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 1024, image: IMAGE }),
    ).rejects.toThrow(
      /\/dev\/vda is too small for .*root partition would be 256 MiB \(disk 1024 MiB minus 768 MiB .*\) but the image is 600 MiB unpacked/,
    );
    expect(existsSync(path.join(node.state, 'podman-run-args'))).toBe(false);
  });
  it('an image that was not pulled is a clear error', async () => {
    node = await startSimNode();
    await expect(
      node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 8192, image: IMAGE }),
    ).rejects.toThrow(/is not on the ramdisk/);
  });
  it('a disk too small for root + config drive fails before running anything', async () => {
    node = await pulled({}, 1024);
    await expect(
      node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 700, image: IMAGE }),
    ).rejects.toThrow(/too small/);
    expect(existsSync(path.join(node.state, 'podman-run-args'))).toBe(false);
  });
  it('timeout kills podman and says so', async () => {
    node = await pulled({ bootcSleepS: 30 });
    await expect(
      node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 8192, image: IMAGE, timeout: 1 }),
    ).rejects.toThrow(/did not finish within 1s .*podman was killed/);
    // Killed before it laid out the disk.
    const gpt = execFileSync('/usr/sbin/sgdisk', ['-p', node.disk], {
      encoding: 'utf8',
    }).toString();
    expect(gpt).not.toMatch(/EFI-SYSTEM/);
    // The hanging bootc (podman's exec'd process) is gone, not left running on the ramdisk.
    const pid = Number(read(node, 'bootc-pid').trim());
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 20 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive()).toBe(false);
  }, 20_000);
  describe('with the SELinux mode wait_agent read (facts.ramdisk_selinux)', () => {
    const withFacts = (selinux: string) => ({ facts: { ramdisk_selinux: selinux } });
    it('runs nothing before the install: the image checks ride in its own step', async () => {
      node = await pulled();
      const before = node.host.commands.length;
      const r = await node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 8192, image: IMAGE }, withFacts('absent'));
      expect(r).toMatchObject({ changed: true, selinux: false, partitions: 2 });
      expect(node.host.commands.length - before).toBe(1);
      const ran = ranSteps(node.host.commands.slice(before));
      expect(ran.some((c) => /^getenforce|^podman image inspect --format json/.test(c))).toBe(false);
      expect(read(node, 'podman-run-args')).toContain('--disable-selinux');
    });
    it('Enforcing: no --disable-selinux, and getenforce is not asked again', async () => {
      node = await pulled();
      const before = node.host.commands.length;
      const r = await node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 8192, image: IMAGE }, withFacts('Enforcing'));
      expect(r.selinux).toBe(true);
      expect(read(node, 'podman-run-args')).not.toContain('--disable-selinux');
      expect(ranSteps(node.host.commands.slice(before)).some((c) => c.startsWith('getenforce'))).toBe(false);
    });
    it('an image that was not pulled: the same clear error, and bootc never started', async () => {
      node = await startSimNode();
      await expect(
        node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 8192, image: IMAGE }, withFacts('Disabled')),
      ).rejects.toThrow(/image 10\.88\.0\.1:5001\/bootc\/test:1 is not on the ramdisk/);
      expect(existsSync(path.join(node.state, 'podman-run-args'))).toBe(false);
    });
    it('a disk too small for the unpacked image: the same message, and bootc never wiped it', async () => {
      node = await pulled({ imageBytes: 300 * 1024 * 1024 }, 1024);
      await expect(
        node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 1024, image: IMAGE }, withFacts('Disabled')),
      ).rejects.toThrow(
        /\/dev\/vda is too small for .*root partition would be 256 MiB \(disk 1024 MiB minus 768 MiB .*\) but the image is 600 MiB unpacked/,
      );
      expect(existsSync(path.join(node.state, 'podman-run-args'))).toBe(false);
    });
    it('an unknown mode (getenforce failed in the probe) is asked again before the install', async () => {
      node = await pulled();
      const before = node.host.commands.length;
      await node.run(bootcInstallModule, { device: '/dev/vda', size_mib: 8192, image: IMAGE }, withFacts('unknown'));
      expect(ranSteps(node.host.commands.slice(before))).toContain('getenforce');
    });
  });
  it('sizes the disk from lsblk when no root_device result is given; check mode runs nothing destructive', async () => {
    node = await pulled();
    const r = await node.run(bootcInstallModule, { device: '/dev/vda', image: IMAGE }, {}, { check: true });
    expect(r).toMatchObject({ changed: true, root_size_mib: 8192 - 768 });
    expect(existsSync(path.join(node.state, 'podman-run-args'))).toBe(false);
  });
});

describe('wait_agent against a simulated ramdisk', () => {
  it('no product_uuid: falls back to MACs and says so', async () => {
    node = await startSimNode({ macs: ['52:54:00:00:00:01'] });
    const r = await node.run(
      waitAgentModule,
      { timeout: 5, interval: 1, product_uuid_path: '/sys/class/dmi/id/product_uuid' },
      {
        power: {
          power_state: 'On',
          system_uuid: 'd2e8c9f0-1111-2222-3333-444455556666',
          mac_addresses: ['52:54:00:00:00:01'],
        },
      },
    );
    expect(r.identity).toMatchObject({ method: 'mac' });
    expect(String(r.msg)).toMatch(/no product_uuid, fell back to MACs/);
  });
  it('UUID mismatch is refused, naming both values', async () => {
    node = await startSimNode({
      productUuid: 'AAAAAAAA-0000-0000-0000-000000000001\n',
      macs: ['52:54:00:00:00:01'],
    });
    await expect(
      node.run(waitAgentModule, {
        timeout: 5,
        interval: 1,
        product_uuid_path: '/sys/class/dmi/id/product_uuid',
        system_uuid: 'bbbbbbbb-0000-0000-0000-000000000002',
      }),
    ).rejects.toThrow(
      /refusing to deploy: wrong machine: BMC system UUID bbbbbbbb-0000-0000-0000-000000000002, ramdisk product_uuid AAAAAAAA-0000-0000-0000-000000000001/,
    );
  });
  it('MAC mismatch is refused; podman and memory checks', async () => {
    node = await startSimNode({
      macs: ['52:54:00:00:00:09'],
      meminfo: 'MemAvailable: 1048576 kB\n',
    });
    await expect(
      node.run(waitAgentModule, { timeout: 5, interval: 1, mac_addresses: ['52:54:00:00:00:01'] }),
    ).rejects.toThrow(/no common MAC; BMC MACs \[52:54:00:00:00:01\], ramdisk MACs \[52:54:00:00:00:09\]/);
    const r = await node.run(waitAgentModule, {
      timeout: 5,
      interval: 1,
      identity: 'off',
      require_podman: true,
      min_memory_mib: 512,
      meminfo_path: '/proc/meminfo',
    });
    expect(r).toMatchObject({ podman_version: 'podman version 4.3.1', mem_available_mib: 1024 });
    await expect(
      node.run(waitAgentModule, {
        timeout: 5,
        interval: 1,
        identity: 'off',
        min_memory_mib: 4096,
        meminfo_path: '/proc/meminfo',
      }),
    ).rejects.toThrow(/1024 MiB available, 4096 MiB needed/);
  });
  it('check mode against a running ramdisk still refuses the wrong machine (read-only)', async () => {
    node = await startSimNode({ macs: ['52:54:00:00:00:09'] });
    await expect(
      node.run(waitAgentModule, { mac_addresses: ['52:54:00:00:00:01'] }, {}, { check: true }),
    ).rejects.toThrow(/wrong machine/);
    const ok = await node.run(waitAgentModule, { mac_addresses: ['52:54:00:00:00:09'] }, {}, { check: true });
    expect(ok.identity).toMatchObject({ method: 'mac' });
  });
  it('an agent that never comes up times out with elapsed time and the last error', async () => {
    node = await startSimNode();
    const ctx = node.ctx();
    const dead = { ...ctx, connect: () => Promise.reject(new Error('connection refused by 10.88.0.2:22')) };
    await expect(waitAgentModule.run(dead, { timeout: 2, interval: 1 })).rejects.toThrow(
      /did not accept SSH within 2s \(waited \ds\); last error: connection refused/,
    );
    expect(
      node.events.some(
        (e) =>
          e.kind === 'progress' &&
          /waiting for SSH on \S+: \d\.\ds elapsed, attempt 1, last error: connection refused/.test(e.message),
      ),
    ).toBe(true);
  });
});
