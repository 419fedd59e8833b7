// The real programs behind a ramdisk build: debootstrap, chroot, cpio and zstd run as child
// processes (argv only), the archive read over HTTP, GRUB built by grub-mkstandalone. Also what
// the controller lacks for a build, named with the packages that bring it.
import { spawn } from 'node:child_process';
import { buildStandaloneGrub, controllerGrub } from '../modules/anaconda/efi-loader.js';
import { findProgram } from '../util/find-program.js';
import type { BuildTools } from './build.js';

const NEEDED: Array<[program: string, pkg: string]> = [
  ['debootstrap', 'debootstrap'],
  ['chroot', 'coreutils'],
  ['cpio', 'cpio'],
  ['zstd', 'zstd'],
  ['find', 'findutils'],
];

/** What the controller lacks for a build, as "program (package)"; empty when it has it all. */
export function missingBuildTools(): string[] {
  const missing = NEEDED.filter(([p]) => !findProgram(p) && !findProgram(p, ['/usr/sbin', '/sbin'])).map(([p, pkg]) => `${p} (${pkg})`);
  if ('missing' in controllerGrub()) missing.push('grub-mkstandalone with x86_64-efi modules (grub-efi-amd64-bin)');
  return missing;
}

/** The last lines a program printed, kept for its error message. */
const TAIL = 8;

export const realBuildTools: BuildTools = {
  run(argv, opts = {}) {
    return new Promise((resolve, reject) => {
      const env = { ...process.env, PATH: `${process.env.PATH ?? '/usr/bin:/bin'}:/usr/sbin:/sbin`, LC_ALL: 'C', DEBIAN_FRONTEND: 'noninteractive' };
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env, ...(opts.signal ? { signal: opts.signal } : {}) });
      const tail: string[] = [];
      let partial = '';
      const onData = (chunk: Buffer) => {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          tail.push(line);
          if (tail.length > TAIL) tail.shift();
          opts.onLine?.(line);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('error', reject);
      child.on('close', (code, sig) => {
        if (partial) tail.push(partial);
        if (code === 0) resolve();
        else reject(new Error(`${argv[0]} ${sig ? `was killed (${sig})` : `exited ${code}`}: ${tail.filter(Boolean).slice(-TAIL).join(' | ') || 'no output'}`));
      });
    });
  },
  async fetch(url, signal) {
    const res = await fetch(url, { signal: signal ?? AbortSignal.timeout(60_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  },
  efiLoader: (label, signal) => buildStandaloneGrub(signal, label),
};
