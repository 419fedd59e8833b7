// Controller files named by inventory data (file:// images, instance_info kernel, ramdisk and
// stage2, driver_info.bootloader, ks_template) must lie in documented directories, as Ironic's
// file_url_allowed_paths: before this, an imported node's image_source file:///root/.ssh/id_rsa
// was served to its ramdisk and written to its disk.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedPaths, DEFAULT_ALLOWED_PATHS, pathNotAllowed } from '../../src/module-api/allowed-paths.js';
import { loadSettings } from '../../src/config/settings.js';
import { imageWriteModule } from '../../src/modules/image/image_write.js';
import { kickstartTemplate } from '../../src/modules/anaconda/anaconda-shared.js';
import { runPreflight, type PreflightPlan } from '../../src/modules/preflight/preflight.js';
import { ctxRecording } from '../helpers/recording-context.js';

let dir: string;
let allowed: string;
let outside: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tsbm-allowed-'));
  allowed = path.join(dir, 'images');
  outside = path.join(dir, 'keys');
  mkdirSync(allowed);
  mkdirSync(outside);
  writeFileSync(path.join(allowed, 'os.raw'), 'image');
  writeFileSync(path.join(outside, 'id_ed25519'), 'secret key');
  symlinkSync(path.join(outside, 'id_ed25519'), path.join(allowed, 'link.raw'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ctxFor = (vars: Record<string, unknown>) => ctxRecording(vars, path.join(dir, 'playbooks'));

describe('the allowed directories', () => {
  it('take a file inside one, and refuse one outside, a symlink out of one, a look-alike prefix and .. segments', () => {
    expect(pathNotAllowed(path.join(allowed, 'os.raw'), [allowed])).toBeUndefined();
    expect(pathNotAllowed(path.join(outside, 'id_ed25519'), [allowed])).toMatch(/is not in a directory files may be named from/);
    expect(pathNotAllowed(path.join(allowed, 'link.raw'), [allowed])).toMatch(/link\.raw \(really .*keys\/id_ed25519\) is not in a directory/);
    expect(pathNotAllowed(`${allowed}-evil/os.raw`, [allowed])).toBeDefined();
    expect(pathNotAllowed(`${allowed}/../keys/id_ed25519`, [allowed])).toBeDefined();
    expect(pathNotAllowed('/etc/passwd', DEFAULT_ALLOWED_PATHS)).toBe('/etc/passwd is not in a directory files may be named from (/var/lib/tsbm, /srv/tsbm)');
  });

  it('are the defaults, then tsbm.cfg / TSBM_FILE_URL_ALLOWED_PATHS, then the variable (a list or a comma-separated string)', () => {
    expect(allowedPaths({}, '/pb')).toEqual(expect.arrayContaining(['/var/lib/tsbm', '/srv/tsbm']));
    expect(allowedPaths({ tsbm_file_url_allowed_paths: ['/a', 'rel'] }, '/pb').slice(-2)).toEqual(['/a', '/pb/rel']);
    expect(allowedPaths({ tsbm_file_url_allowed_paths: '/a, /b' }, '/pb').slice(-2)).toEqual(['/a', '/b']);
    expect(() => allowedPaths({ tsbm_file_url_allowed_paths: { a: 1 } }, '/pb')).toThrow(/tsbm_file_url_allowed_paths is not a list of directories/);
    const s = loadSettings({ env: { TSBM_FILE_URL_ALLOWED_PATHS: '/srv/images,/data/isos' }, cwd: dir, home: dir });
    expect(s.get('file_url_allowed_paths')).toEqual(['/srv/images', '/data/isos']);
  });
});

/** An image deploy's preflight plan; each test sets the image and what it checks. */
const IMAGE_PLAN: Omit<PreflightPlan, 'image' | 'skip' | 'baseDir'> = {
  kind: 'image',
  iso: undefined,
  isoName: 'ramdisk_iso',
  pullSecret: undefined,
  tlsVerify: true,
  insecureRegistries: [],
  registryEndpoints: undefined,
  hash: { algo: 'sha256', value: 'a'.repeat(64), format: 'raw', allowMd5: false },
  timeoutMs: 5000,
};

describe('every path that reads such a file applies them', () => {
  it('image_write refuses a file:// source outside them before anything runs on the node', async () => {
    const { ctx, ran } = ctxFor({
      instance_info: { image_source: `file://${outside}/id_ed25519`, image_disk_format: 'raw', image_os_hash_value: 'a'.repeat(64) },
      root: { device: '/dev/sda', size_mib: 10000, reason: 'hints' },
      tsbm_file_url_allowed_paths: [allowed],
    });
    await expect(imageWriteModule.run(ctx, {})).rejects.toThrow(/node7: image_source: .*keys\/id_ed25519 is not in a directory files may be named from/);
    expect(ran).toEqual([]);
  });

  it('ks_template: beside the playbook or in an allowed directory, never elsewhere', () => {
    mkdirSync(path.join(dir, 'playbooks', 'templates'), { recursive: true });
    writeFileSync(path.join(dir, 'playbooks', 'templates', 'ks.cfg.hbs'), 'text\n');
    expect(kickstartTemplate(ctxFor({}).ctx, undefined).text).toBe('text\n');
    expect(() => kickstartTemplate(ctxFor({ ks_template: `${outside}/id_ed25519` }).ctx, undefined)).toThrow(/node7: ks_template: .*id_ed25519 is not in a directory files may be named from/);
    expect(() => kickstartTemplate(ctxFor({ instance_info: { ks_template: '../keys/id_ed25519' } }).ctx, undefined)).toThrow(/ks_template: .* is not in a directory/);
    expect(kickstartTemplate(ctxFor({ ks_template: `${allowed}/os.raw`, tsbm_file_url_allowed_paths: [allowed] }).ctx, undefined).text).toBe('image');
  });

  it('the preflight refuses file:// images and installer files outside them, whatever preflight_skip says', async () => {
    const base = {
      ...IMAGE_PLAN,
      image: `file://${outside}/id_ed25519`,
      skip: new Set(['bmc', 'iso', 'image_url']),
      baseDir: dir,
      allowedPaths: [allowed],
    } satisfies PreflightPlan;
    const services = { bmc: async () => 'bmc', http: {} as never, once: <T>(_k: string, c: () => Promise<T>) => c(), secret: () => undefined, signal: new AbortController().signal };
    const image = await runPreflight(base, services);
    expect(image.problems).toEqual([expect.objectContaining({ check: 'image_url', message: expect.stringMatching(/^image_source: .*id_ed25519 is not in a directory files may be named from/) })]);
    const installer = await runPreflight(
      { ...base, kind: 'anaconda', image: undefined, skip: new Set(['bmc', 'image_url', 'kickstart']), installer: { files: { kernel: `${outside}/id_ed25519`, ramdisk: `${allowed}/os.raw`, stage2: `${outside}/id_ed25519`, bootloader: `${outside}/id_ed25519` } } },
      services,
    );
    const messages = installer.problems.map((p) => p.message).join('\n');
    for (const name of ['instance_info.kernel', 'instance_info.stage2', 'driver_info.bootloader']) expect(messages).toMatch(new RegExp(`${name}: .*id_ed25519 is not in a directory`));
    expect(messages).not.toMatch(/instance_info\.ramdisk/);
  });
});
