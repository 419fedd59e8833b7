// The README's first command, verbatim, in a clean copy of the repository: it must install,
// build, deploy three simulated nodes and end with a recap of 3 nodes and 0 failed, leaving
// each simulated disk with bootc's GPT and a config-2 partition.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { readDiskLayout } from '../../packages/lab/src/lab/disk-layout.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** The first command line of the README's first shell block (comments skipped). */
function readmeFirstCommand(readme: string): string {
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const line = block.split('\n').find((l) => l.trim() && !l.trim().startsWith('#'));
  if (!line) throw new Error('README has no command in its first sh block');
  return line.trim();
}

const dir = mkdtempSync(join(tmpdir(), 'tsbm-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('runs the README first command verbatim in a clean copy: exit 0, 3 nodes, 0 failed', async () => {
  const cmd = readmeFirstCommand(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  expect(cmd).toMatch(/^npm ci && node bin\/tsbm\.js run playbooks\/deploy-bootc\.yml -i inventory-examples\/sim\.yml$/);
  // A clean copy: what git tracks, nothing built, no node_modules, no .tsbm state.
  const files = (await run('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })).stdout.split('\0').filter(Boolean);
  for (const f of files) if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(dir, f), { recursive: true });
  const r = await run('sh', ['-c', cmd], {
    cwd: dir,
    // The npm cache is already warm on a machine that ran `npm ci`; prefer it over the network.
    env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', CI: 'true' },
    maxBuffer: 64 * 1024 * 1024,
    // npm ci builds the checkout (tsc twice): minutes on a loaded machine.
    timeout: 900_000,
  }).then(
    (x) => ({ code: 0, out: x.stdout + x.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: `${e.stdout}${e.stderr}` }),
  );
  expect(r.out).not.toMatch(/\n\s+at /);
  expect(r.code, r.out.slice(-3000)).toBe(0);
  const recap = r.out.slice(r.out.lastIndexOf('PLAY RECAP'));
  const lines = recap.split('\n').filter((l) => /^node\d+\s*:/.test(l));
  expect(lines).toHaveLength(3);
  for (const l of lines) expect(l).toMatch(/failed=0 /);
  // The lab ran in .tsbm/sim-auto/<hash>/ and left its disks there.
  const auto = join(dir, '.tsbm', 'sim-auto');
  const [labDir] = readdirSync(auto);
  const nodes = readdirSync(join(auto, labDir!, 'nodes'));
  expect(nodes).toHaveLength(3);
  for (const n of nodes) {
    const layout = await readDiskLayout(join(auto, labDir!, 'nodes', n, 'root', 'dev', 'vda'));
    expect(layout.partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
  }
}, 960_000);
