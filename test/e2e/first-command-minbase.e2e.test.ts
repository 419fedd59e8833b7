// The README's first command, as written, on a machine that has only what a minimal Debian 12
// has (`debootstrap --variant=minbase`: no fdisk, gdisk, gcc, ssh, openssl, curl, genisoimage,
// podman) plus Node.js and npm: `npm ci` from the registry, then the simulated deploy of three
// nodes. It runs in a chroot of a cached minbase root (built once per machine under
// /var/cache/tsbm-test), in a private mount namespace that takes every mount with it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE, minbaseRoot, npmPackageDir, type Stage, stage } from './lab/minbase.js';
import { haveTool, isRoot } from './lab/run.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const SCRIPT = join(REPO, 'test/e2e/lab/minbase-chroot.sh');
const NPM_DIR = npmPackageDir();
const MISSING = ['debootstrap', 'unshare', 'chroot', 'git'].filter((t) => !haveTool(t));
const SKIP = !isRoot
  ? 'needs root (debootstrap, chroot, mounts)'
  : MISSING.length
    ? `needs ${MISSING.join(', ')} (.ci/setup.sh installs them)`
    : !NPM_DIR
      ? 'needs npm on the PATH (it is copied into the minimal root)'
      : Number(process.versions.node.split('.')[0]) < 20
        ? `needs Node.js 20 or newer to copy in, this is ${process.version}`
        : '';

/** Programs a minimal Debian lacks and the README's first command must not need. */
const ABSENT = ['sfdisk', 'sgdisk', 'gdisk', 'fdisk', 'gcc', 'cc', 'ssh', 'openssl', 'curl', 'genisoimage', 'xorriso', 'podman', 'qemu-img'];

/** The README's first command, taken from the README itself. */
function firstCommand(): string {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const block = /## Two commands\s+```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const cmd = block.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (!cmd) throw new Error('README.md: no command under "## Two commands"');
  return cmd.trim();
}

interface Run {
  code: number | null;
  out: string;
}

/** Runs `sh -c COMMAND` in the chroot, in its own mount namespace; output interleaved as a user sees it. */
function inMinbase(root: string, st: Stage, work: string, command: string, timeoutMs: number): Promise<Run> {
  const env = [
    ...(st.caFile ? [`NODE_EXTRA_CA_CERTS=${st.caFile}`] : []),
    // The machine's way out to the registry, if it has one.
    ...['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy']
      .filter((k) => process.env[k])
      .map((k) => `${k}=${process.env[k]}`),
  ];
  const npmCache = join(CACHE, 'npm-cache');
  mkdirSync(npmCache, { recursive: true });
  return new Promise((resolveP) => {
    const p = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', SCRIPT, root, st.dir, work, npmCache, st.checkout, command, ...env], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => {
      out += `\n[test] timed out after ${timeoutMs} ms; killing the run\n`;
      if (p.pid) process.kill(-p.pid, 'SIGKILL'); // its process group: unshare, the chroot, npm, tsbm
    }, timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolveP({ code, out });
    });
  });
}

describe.skipIf(SKIP !== '')(`the README's first command on a minimal Debian with only Node.js and npm added${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let root: string;
  let tmp: string;
  let st: Stage;
  beforeAll(() => {
    root = minbaseRoot((s) => process.stderr.write(`[minbase] ${s}\n`));
    tmp = mkdtempSync(join(CACHE, 'run-'));
    st = stage(join(tmp, 'stage'), REPO, NPM_DIR!);
  }, 15 * 60_000);
  afterAll(() => {
    // The namespace took its mounts with it: only files are left.
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('the root has none of the programs the first command must not need', () => {
    const r = spawnSync('chroot', [root, '/bin/sh', '-c', 'for p in "$@"; do command -v "$p" || true; done', 'sh', ...ABSENT], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(existsSync(join(root, 'usr/bin/node'))).toBe(false);
  });

  it('npm ci && node bin/tsbm.js run deploys three simulated nodes', async () => {
    const command = firstCommand();
    expect(command).toBe('npm ci && node bin/tsbm.js run playbooks/deploy-bootc.yml -i inventory-examples/sim.yml');
    const r = await inMinbase(root, st, join(tmp, 'run'), command, 20 * 60_000);
    const recap = r.out.split('\n').filter((l) => /^node\d+ : ok=/.test(l));
    const nodes = ['node01', 'node02', 'node03'];
    expect({ code: r.code, recap }, r.out.slice(-6000)).toEqual({
      code: 0,
      recap: nodes.map((n) => expect.stringMatching(new RegExp(`^${n} : ok=\\d+ +changed=\\d+ +unreachable=0 +failed=0 `))),
    });
    for (const n of nodes) expect(r.out).toMatch(new RegExp(`^changed: \\[${n}\\] Write the config drive .*: config drive written to /dev/vda`, 'm'));
    // What carried it: the partitioning stand-ins ran on every node (no sfdisk here), and the lab
    // spawned its commands without a C compiler (no compiled spawner in the user's cache).
    const upper = join(tmp, 'run/upper');
    const labs = join(upper, st.checkout, '.tsbm/sim-auto');
    const [lab] = readdirSync(labs);
    for (const n of nodes) {
      const args = readFileSync(join(labs, lab!, 'nodes', n, 'root/sim/sfdisk-standin-args'), 'utf8');
      expect(args).toMatch(/^--json \S+\/dev\/vda$/m);
    }
    const cache = join(upper, 'root/.cache/tsbm');
    expect(existsSync(cache) ? readdirSync(cache).filter((f) => f.startsWith('tsbm-spawner-')) : []).toEqual([]);
  }, 25 * 60_000);

  it("the lab's command spawner there is the node fallback: no compiler to build the C one", async () => {
    const probe = "node -e \"import('./packages/lab/dist/ssh/spawner-helpers.js').then((m) => console.log(m.defaultSpawnerKind()))\"";
    const r = await inMinbase(root, st, join(tmp, 'run'), probe, 5 * 60_000);
    expect({ code: r.code, out: r.out.trim() }).toEqual({ code: 0, out: 'node' });
  }, 10 * 60_000);

  it('what the lab still takes from the machine (coreutils) is checked first, with how to install it', async () => {
    // The same root after the deploy (node_modules built), with two coreutils taken away.
    const r = await inMinbase(root, st, join(tmp, 'run'), 'rm /usr/bin/mkfifo /usr/bin/tee && node bin/tsbm.js run playbooks/deploy-bootc.yml -i inventory-examples/sim.yml', 5 * 60_000);
    expect({ code: r.code, out: r.out.trim() }).toEqual({
      code: 1,
      out: "tsbm: error: the simulated lab runs its nodes' commands with this machine's programs, and mkfifo, tee are missing (install GNU coreutils; on Debian and Ubuntu: apt-get install coreutils)",
    });
  }, 10 * 60_000);
});
