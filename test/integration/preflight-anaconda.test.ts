// The deploy preflight's anaconda checks and the qemu-img check, against a real HTTP server on
// loopback: each image_source form checked as the installer will fetch it, the installer ISO,
// the kickstart's problems reported one per line; and a controller without qemu-img told which
// package converts images before anything is downloaded.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/module-api/preflight-problem.js';
import { type PreflightPlan, type PreflightServices, runPreflight } from '../../src/modules/preflight/preflight.js';
import { CheckClient } from '../../src/http/check-client.js';
import { type ImageServer, serveFiles } from '../helpers/image-fixture.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();
let server: ImageServer;
let dir: string;
const http = new CheckClient();

beforeAll(async () => {
  dir = scratch('tsbm-preflight-anaconda-');
  writeFileSync(path.join(dir, 'os.tar.gz'), 'tarball');
  writeFileSync(path.join(dir, 'boot.iso'), 'iso bytes');
  mkdirSync(path.join(dir, 'tree'));
  writeFileSync(path.join(dir, 'tree', '.treeinfo'), '[general]\n');
  server = await serveFiles([path.join(dir, 'os.tar.gz'), path.join(dir, 'boot.iso'), path.join(dir, 'tree', '.treeinfo')]);
});
afterAll(async () => {
  await server.close();
  await http.close();
});

function plan(over: Partial<PreflightPlan>): PreflightPlan {
  return {
    kind: 'anaconda',
    image: undefined,
    iso: `${server.url}/boot.iso`,
    isoName: 'installer_iso',
    pullSecret: undefined,
    tlsVerify: true,
    insecureRegistries: [],
    registryEndpoints: undefined,
    hash: { algo: undefined, value: undefined, format: undefined, allowMd5: false },
    skip: new Set(['bmc']),
    baseDir: dir,
    // The test's files live in its temp directory (docs/security.md: file_url_allowed_paths).
    allowedPaths: [dir],
    timeoutMs: 5000,
    ...over,
  };
}

function services(kickstart?: () => Promise<string | Problem[]>): PreflightServices {
  return {
    bmc: async () => 'bmc ok',
    ...(kickstart ? { kickstart } : {}),
    http,
    once: (_k, check) => check(),
    secret: () => undefined,
    signal: new AbortController().signal,
  };
}

describe('deploy_preflight, deploy: anaconda', () => {
  it('checks each image_source form as the installer fetches it, and the installer ISO', async () => {
    const ok = await runPreflight(plan({ image: `${server.url}/os.tar.gz`, hash: { algo: 'sha256', value: 'a'.repeat(64), format: undefined, allowMd5: false } }), services(async () => 'kickstart renders and checks'));
    expect(ok.problems).toEqual([]);
    expect(ok.passed).toEqual([`liveimg ${server.url}/os.tar.gz answers, sha256 given`, 'installer_iso answers (9 bytes)', 'kickstart renders and checks']);
    // A tree is found by its .treeinfo.
    expect((await runPreflight(plan({ image: `${server.url}/` }), services())).problems).toEqual([]);
    const noTree = await runPreflight(plan({ image: `${server.url}/nothing/` }), services());
    expect(noTree.problems).toEqual([expect.objectContaining({ check: 'image_url', message: expect.stringMatching(/install tree .*\/nothing\/\.treeinfo/) })]);
    const oci = await runPreflight(plan({ image: 'oci://reg.lab/os:1', skip: new Set(['bmc', 'registry']) }), services());
    expect(oci.passed).toContain('image reg.lab/os:1 (registry not checked)');
    const bad = await runPreflight(plan({ image: 'ftp://x/os.tar', iso: undefined }), services());
    expect(bad.problems.map((p) => p.check)).toEqual(['image', 'iso']);
    expect(bad.problems[1]!.fix).toMatch(/set installer_iso or instance_info\.installer_iso/);
    const file = await runPreflight(plan({ image: `file://${dir}/missing.tar` }), services());
    expect(file.problems).toEqual([expect.objectContaining({ check: 'image_url', message: expect.stringMatching(/no such file on the controller/) })]);
  });

  it('the installer as files: kernel, ramdisk, a local stage2 and the bootloader checked; no GRUB on the controller named with what to install; both forms refused', async () => {
    const image = `${server.url}/os.tar.gz`;
    const files = { kernel: `${server.url}/boot.iso`, ramdisk: path.join(dir, 'os.tar.gz'), stage2: 'http://mirror.invalid/tree/', bootloader: `${server.url}/boot.iso` };
    const good = await runPreflight(plan({ image, iso: undefined, installer: { files } }), services());
    expect(good.problems).toEqual([]);
    expect(good.passed.join('; ')).toMatch(/instance_info\.kernel answers.*instance_info\.ramdisk .*os\.tar\.gz.*driver_info\.bootloader answers/);

    const saved = process.env.PATH;
    process.env.PATH = path.join(dir, 'no-bin');
    let bad: Awaited<ReturnType<typeof runPreflight>>;
    try {
      bad = await runPreflight(plan({ image, iso: undefined, installer: { files: { kernel: `${server.url}/nope`, ramdisk: 'missing-initrd.img', stage2: 'install.img' } } }), services());
    } finally {
      process.env.PATH = saved;
    }
    const lines = bad.problems.map((p) => `${p.check}: ${p.message} (${p.fix})`);
    expect(lines).toEqual([
      expect.stringMatching(/^iso: instance_info\.kernel .*\/nope/),
      expect.stringMatching(/^iso: instance_info\.ramdisk missing-initrd\.img: no such file on the controller/),
      expect.stringMatching(/^iso: instance_info\.stage2 install\.img: no such file on the controller/),
      expect.stringMatching(/^bootloader: grub-mkstandalone is not on the controller.*apt-get install grub-efi-amd64-bin.*driver_info\.bootloader/),
    ]);

    const both = await runPreflight(plan({ image, installer: { problem: { check: 'iso', message: 'installer_iso and instance_info.kernel are both set', fix: 'keep one' } } }), services());
    expect(both.problems).toEqual([{ check: 'iso', message: 'installer_iso and instance_info.kernel are both set', fix: 'keep one' }]);
  });

  it('reports each kickstart problem', async () => {
    const r = await runPreflight(
      plan({ image: `${server.url}/os.tar.gz` }),
      services(async () => [
        { check: 'kickstart', message: 'ks.hbs: no poweroff', fix: 'fix ks_template' },
        { check: 'kickstart', message: 'ks.hbs: %pre does not call back "start"', fix: 'fix ks_template' },
      ]),
    );
    expect(r.problems.map((p) => p.message)).toEqual(['ks.hbs: no poweroff', 'ks.hbs: %pre does not call back "start"']);
  });
});

describe('deploy_preflight, deploy: image, converting on the controller', () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });
  const qcow2 = (convertOnController: boolean) =>
    plan({
      kind: 'image',
      iso: `${server.url}/boot.iso`,
      isoName: 'ramdisk_iso',
      image: `${server.url}/os.tar.gz`,
      hash: { algo: 'sha256', value: 'a'.repeat(64), format: 'qcow2', allowMd5: false },
      convertOnController,
      skip: new Set(['bmc', 'image_url']),
    });

  it('a controller without qemu-img is told to install qemu-utils, before anything is downloaded', async () => {
    process.env.PATH = scratch('tsbm-no-qemu-');
    const r = await runPreflight(qcow2(true), services());
    expect(r.problems).toEqual([
      expect.objectContaining({ check: 'image', message: expect.stringMatching(/qemu-img is not installed on the controller.*apt-get install qemu-utils/) }),
    ]);
    // Converting on the ramdisks (force_raw_images: false) needs no qemu-img here.
    expect((await runPreflight(qcow2(false), services())).problems).toEqual([]);
  });

  it('passes where qemu-img is installed', async () => {
    expect((await runPreflight(qcow2(true), services())).problems).toEqual([]);
  });
});
