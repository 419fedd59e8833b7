// installer_boot's work on the controller: fetch the kernel, ramdisk and bootloader (http(s) URLs
// are downloaded once per run, paths read as they are), serve a local stage2, and build the boot
// ISO once per run for each distinct input (a fleet shares one; a node with its own ks_url gets
// its own). The ISO is a private file of the run, served by tsbm's HTTP server with a token.
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { downloadWithResume } from '../../images/download.js';
import type { ModuleContext } from '../../module-api/types.js';
import { assertAllowedPath } from '../../module-api/allowed-paths.js';
import { buildStandaloneGrub, type EspFile, operatorEspFiles } from './efi-loader.js';
import { InstallerBootError, installerCmdline, installerGrubCfg } from './installer-boot.js';
import { buildInstallerBootIso } from './installer-boot-iso.js';

/** A kernel, an initrd and an ESP image are each far below this; the cap keeps a wrong URL from filling the disk. */
const MAX_PART_BYTES = 2 * 1024 ** 3;

export interface BootIsoRequest {
  kernel: string;
  ramdisk: string;
  stage2Url: string;
  ksUrl?: string | undefined;
  appendParams: string;
  bootloader?: string | undefined;
  tlsVerify: boolean;
}

function once<T>(ctx: ModuleContext, key: string, make: () => Promise<T>): Promise<T> {
  const cache = ctx.services.get('installer-boot:once', () => new Map<string, Promise<unknown>>());
  let p = cache.get(key) as Promise<T> | undefined;
  if (!p) {
    p = make();
    // A failure is not cached: the next node (or a retry) tries again.
    p.catch(() => cache.delete(key));
    cache.set(key, p);
  }
  return p;
}

function workDir(ctx: ModuleContext): string {
  const dir = join(ctx.services.tmpDir, 'installer-boot');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

/** The bytes of a controller path or an http(s) URL (downloaded once per run). */
async function fetchPart(ctx: ModuleContext, name: string, where: string, tlsVerify: boolean): Promise<Buffer> {
  if (!/^https?:\/\//i.test(where)) {
    const file = isAbsolute(where) ? where : resolve(ctx.services.playbookDir, where);
    assertAllowedPath(ctx, name, file);
    const st = await stat(file).catch(() => undefined);
    if (!st?.isFile()) throw new InstallerBootError(`${name} ${where}: no such file on the controller (looked at ${file})`, `fix ${name}: an http(s) URL or a path on the controller`);
    if (st.size > MAX_PART_BYTES) throw new InstallerBootError(`${name} ${file} is ${st.size} bytes, more than a boot ISO takes`, `check ${name}`);
    return readFile(file);
  }
  const file = await once(ctx, `download:${where}`, async () => {
    const part = join(workDir(ctx), `${createHash('sha256').update(where).digest('hex').slice(0, 16)}.part`);
    ctx.log(`downloading ${name} from ${where}`, 2);
    try {
      await downloadWithResume(where, part, { algo: 'sha256', tlsVerify, retries: 3, signal: ctx.signal, maxBytes: MAX_PART_BYTES, onRetry: (m) => ctx.log(`${name}: ${m}`, 1) });
    } catch (e) {
      throw new InstallerBootError(`${name} ${where} could not be downloaded: ${(e as Error).message}`, `check the URL in ${name}, and that the controller reaches it`);
    }
    const done = part.replace(/\.part$/, '');
    await rename(part, done);
    return done;
  });
  return readFile(file);
}

async function espFiles(ctx: ModuleContext, bootloader: string | undefined, tlsVerify: boolean): Promise<EspFile[]> {
  if (bootloader) return operatorEspFiles(await fetchPart(ctx, 'driver_info.bootloader', bootloader, tlsVerify), bootloader);
  const grub = await once(ctx, 'grub-standalone', () => buildStandaloneGrub(ctx.signal));
  return [{ path: 'EFI/BOOT/BOOTX64.EFI', data: grub }];
}

/** The built ISO's path and the kernel arguments it carries. */
export async function installerBootIso(ctx: ModuleContext, r: BootIsoRequest): Promise<{ file: string; args: string[]; built: boolean }> {
  const cmdline = installerCmdline({ stage2Url: r.stage2Url, ksUrl: r.ksUrl, appendParams: r.appendParams });
  const key = createHash('sha256').update(JSON.stringify([r.kernel, r.ramdisk, r.bootloader ?? '', cmdline.args])).digest('hex').slice(0, 24);
  let built = false;
  const file = await once(ctx, `iso:${key}`, async () => {
    const [kernel, initrd, esp] = await Promise.all([
      fetchPart(ctx, 'instance_info.kernel', r.kernel, r.tlsVerify),
      fetchPart(ctx, 'instance_info.ramdisk', r.ramdisk, r.tlsVerify),
      espFiles(ctx, r.bootloader, r.tlsVerify),
    ]);
    const iso = buildInstallerBootIso({ kernel, initrd, esp, grubCfg: installerGrubCfg(cmdline) });
    const out = join(workDir(ctx), `boot-${key}.iso`);
    // The kernel command line may carry tokens (a served stage2, ks_url): private to the run.
    await writeFile(out, iso, { mode: 0o600 });
    built = true;
    return out;
  });
  return { file, args: cmdline.args, built };
}
