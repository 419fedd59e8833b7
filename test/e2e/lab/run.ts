// Runs commands on the test machine for lab helpers and e2e tests: argv only.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface RunOpts {
  input?: string | Buffer;
  allowFail?: boolean;
  env?: NodeJS.ProcessEnv;
}

export function sh(argv: string[], opts: RunOpts = {}): { rc: number; stdout: string; stderr: string } {
  const [cmd, ...args] = argv;
  const r = spawnSync(cmd!, args, {
    input: opts.input,
    env: opts.env ?? process.env,
    maxBuffer: 256 << 20,
    encoding: 'utf8',
  });
  const rc = r.status ?? 128;
  if (rc !== 0 && !opts.allowFail) {
    throw new Error(
      `lab: ${argv.join(' ')} failed (rc ${rc}): ${(r.stderr || r.stdout || String(r.error ?? '')).trim()}`,
    );
  }
  return { rc, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

export const isRoot = process.getuid?.() === 0;
export const haveTool = (tool: string): boolean =>
  sh(['sh', '-c', `command -v ${tool}`], { allowFail: true }).rc === 0;

/**
 * The checkout these helpers belong to, found upwards from here: they run from test/e2e/lab
 * under vitest and from dist-bench/test/e2e/lab in the compiled benchmarks.
 */
export function repoRoot(from = import.meta.dirname): string {
  for (let d = from; ; d = dirname(d)) {
    if (existsSync(join(d, 'package.json')) && existsSync(join(d, 'packages', 'lab', 'mockups'))) return d;
    if (dirname(d) === d) throw new Error(`lab: no tsbm checkout above ${from}`);
  }
}

/** Runs `node ARGS` (the CLI as an operator runs it, no colours), killed after `timeoutMs`. */
export function runCli(args: string[], timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('node', args, { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
