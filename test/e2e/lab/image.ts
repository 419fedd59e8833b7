// Builds bootc test images without the internet: the few binaries the stand-in needs, with
// their libraries (ldd), tarred into `podman import`, then pushed to the test registry.
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot, sh } from './run.js';

// From the checkout: the compiled benchmarks run this from dist-bench/, which has no copy.
const STANDIN = join(repoRoot(), 'test', 'e2e', 'lab', 'bootc-standin');
/** Where the stand-in reads the devices it may write; baked into the image at build time. */
const ALLOWED_DEVICES_FILE = '/etc/tsbm-standin/allowed-devices';
/** The root partition starts at 65 MiB (1 MiB alignment + 64 MiB ESP); the stand-in records argv there. */
export const STANDIN_ROOT_OFFSET = 65 * 1024 * 1024;
export const STANDIN_ARGV_MAGIC = 'TSBM-STANDIN-BOOTC-ARGV';

function copyWithLibs(root: string, binary: string, as: string[] = [binary]): void {
  for (const dest of as) {
    mkdirSync(join(root, dirname(dest)), { recursive: true });
    copyFileSync(binary, join(root, dest));
    chmodSync(join(root, dest), 0o755);
  }
  const ldd = sh(['ldd', binary], { allowFail: true }).stdout;
  for (const m of ldd.matchAll(/(\/\S+\.so[^\s]*)/g)) {
    const lib = m[1]!;
    const target = join(root, lib);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(lib, target); // copyFileSync follows symlinks: the real library under the link's name
  }
}

export interface BuildOptions {
  dir: string;
  /** Local tag, e.g. localhost/tsbm-standin:bootc */
  tag: string;
  withBootc: boolean;
  allowedDevices: string[];
}

export function buildStandinImage(o: BuildOptions): void {
  const root = join(o.dir, `root-${o.tag.replace(/[^a-z0-9]/gi, '_')}`);
  sh(['rm', '-rf', root]);
  mkdirSync(root, { recursive: true });
  copyWithLibs(root, '/usr/bin/dash', ['/bin/sh', '/usr/bin/sh']);
  copyWithLibs(root, '/usr/sbin/sgdisk');
  copyWithLibs(root, '/usr/bin/dd');
  copyWithLibs(root, '/usr/bin/cat');
  for (const d of ['tmp', 'dev', 'proc', 'sys', 'var/tmp', 'etc/tsbm-standin'])
    mkdirSync(join(root, d), { recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
  writeFileSync(join(root, ALLOWED_DEVICES_FILE), `${o.allowedDevices.join('\n')}\n`);
  if (o.withBootc) {
    mkdirSync(join(root, 'usr/bin'), { recursive: true });
    writeFileSync(join(root, 'usr/bin/bootc'), readFileSync(STANDIN));
    chmodSync(join(root, 'usr/bin/bootc'), 0o755);
  }
  const tar = join(o.dir, 'rootfs.tar');
  sh(['tar', '-C', root, '-cf', tar, '.']);
  sh(['podman', 'import', '--change', 'CMD=["/bin/sh"]', tar, o.tag]);
}

export function pushImage(localTag: string, remoteRef: string, authFile: string): void {
  sh(['podman', 'push', '--quiet', '--authfile', authFile, localTag, `docker://${remoteRef}`]);
}

/**
 * Pushes without blocking the event loop: for a registry whose token server lives in this
 * process (lab/token-registry.ts), a synchronous push would wait forever for its token.
 */
export function pushImageAsync(localTag: string, remoteRef: string, authFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn('podman', ['push', '--quiet', '--tls-verify=false', '--authfile', authFile, localTag, `docker://${remoteRef}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    p.on('close', (rc) => (rc === 0 ? resolve() : reject(new Error(`lab: podman push ${remoteRef} failed (rc ${rc}): ${err.trim()}`))));
  });
}

export function removeImage(tag: string): void {
  sh(['podman', 'rmi', '-f', tag], { allowFail: true });
}
