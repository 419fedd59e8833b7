// A minimal Debian 12 root (`debootstrap --variant=minbase bookworm`), built once per machine and
// kept under /var/cache/tsbm-test, and a staging tree of what a fresh machine's user adds to it:
// Node.js and npm, and the checkout. See first-command-minbase.e2e.test.ts.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { findProgram } from '../../../src/util/find-program.js';

export const CACHE = '/var/cache/tsbm-test';
const SUITE = 'bookworm';
const ROOT_DIR = join(CACHE, `debootstrap-${SUITE}-minbase`);
const DONE = '.tsbm-debootstrap-complete';

/**
 * The Debian mirror this machine's apt uses for bookworm (one-line .list and deb822 .sources
 * files), else deb.debian.org.
 */
function debianMirror(): string {
  const files = ['/etc/apt/sources.list'];
  try {
    for (const f of readdirSync('/etc/apt/sources.list.d')) files.push(join('/etc/apt/sources.list.d', f));
  } catch {
    /* none */
  }
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    if (f.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (k: string) => new RegExp(`^${k}:\\s*(.+)$`, 'mi').exec(stanza)?.[1]?.trim().split(/\s+/) ?? [];
        if (field('Types').includes('deb') && field('Suites').includes(SUITE) && field('URIs')[0]) return field('URIs')[0]!;
      }
    } else {
      for (const line of text.split('\n')) {
        const m = /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line);
        if (m && m[2] === SUITE) return m[1]!;
      }
    }
  }
  return 'http://deb.debian.org/debian';
}

/**
 * The cached minbase root, built here when missing (a minute or two): debootstrap into a
 * temporary directory renamed into place when complete, so an interrupted build is never used.
 */
export function minbaseRoot(log: (s: string) => void = () => {}): string {
  if (existsSync(join(ROOT_DIR, DONE))) return ROOT_DIR;
  mkdirSync(CACHE, { recursive: true });
  const tmp = `${ROOT_DIR}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const mirror = debianMirror();
  log(`debootstrap --variant=minbase ${SUITE} ${tmp} ${mirror}`);
  const r = spawnSync('debootstrap', ['--variant=minbase', SUITE, tmp, mirror], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`debootstrap failed (rc ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-5).join('\n')}`);
  }
  writeFileSync(join(tmp, DONE), `debootstrap --variant=minbase ${SUITE} ${mirror}\n${new Date().toISOString()}\n`);
  rmSync(ROOT_DIR, { recursive: true, force: true });
  renameSync(tmp, ROOT_DIR);
  return ROOT_DIR;
}

/** The npm package directory of the npm on PATH (…/node_modules/npm), following its bin link. */
export function npmPackageDir(): string | undefined {
  const npm = findProgram('npm');
  if (!npm) return undefined;
  const cli = realpathSync(npm); // …/node_modules/npm/bin/npm-cli.js
  const pkg = dirname(dirname(cli));
  return existsSync(join(pkg, 'package.json')) ? pkg : undefined;
}

/** Files of a git checkout as a fresh clone has them: tracked and untracked, nothing ignored. */
function checkoutFiles(repo: string): string[] {
  const r = spawnSync('git', ['-C', repo, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`git ls-files in ${repo} failed: ${r.stderr.trim()}`);
  return [...new Set(r.stdout.split('\0').filter(Boolean))].filter((f) => existsSync(join(repo, f)));
}

export interface Stage {
  /** Laid over the minbase root (overlayfs lower layer): /usr/bin/node, npm, /work/tsbm, /etc/resolv.conf. */
  dir: string;
  /** Where the checkout is inside the root. */
  checkout: string;
  /** The machine's extra CA bundle inside the root, when it needs one to reach the registry. */
  caFile?: string;
}

/**
 * What a user of a fresh machine adds: the node binary running this test (a Node 20), npm, the
 * checkout; and what the machine's network needs (its resolver and, when NODE_EXTRA_CA_CERTS
 * names one, its extra CA bundle: TLS to the registry may go through an intercepting proxy).
 */
export function stage(dir: string, repo: string, npmDir: string): Stage {
  mkdirSync(join(dir, 'usr/bin'), { recursive: true });
  copyFileSync(process.execPath, join(dir, 'usr/bin/node'));
  cpSync(npmDir, join(dir, 'usr/lib/node_modules/npm'), { recursive: true, verbatimSymlinks: true });
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(dir, 'usr/bin/npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(dir, 'usr/bin/npx'));
  mkdirSync(join(dir, 'etc'), { recursive: true });
  if (existsSync('/etc/resolv.conf')) writeFileSync(join(dir, 'etc/resolv.conf'), readFileSync('/etc/resolv.conf'));
  const checkout = '/work/tsbm';
  for (const f of checkoutFiles(repo)) {
    const dest = join(dir, checkout, f);
    mkdirSync(dirname(dest), { recursive: true });
    copyFileSync(join(repo, f), dest); // keeps the mode (bin/tsbm.js, the ramdisk tools)
  }
  mkdirSync(join(dir, 'root/.npm'), { recursive: true });
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (extra && existsSync(extra)) {
    mkdirSync(join(dir, 'usr/local/share/tsbm-test'), { recursive: true });
    copyFileSync(extra, join(dir, 'usr/local/share/tsbm-test/extra-ca.pem'));
    return { dir, checkout, caFile: '/usr/local/share/tsbm-test/extra-ca.pem' };
  }
  return { dir, checkout };
}
