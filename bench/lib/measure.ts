// Runs a command under GNU time and returns wall seconds, CPU seconds (user + sys) and peak RSS
// (MiB) of the command's largest process, so every peer is measured the same way.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Measured {
  wallS: number;
  cpuS: number;
  peakRssMiB: number;
  status: number;
  output: string;
}

export function measure(argv: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Measured {
  const d = mkdtempSync(join(tmpdir(), 'tsbm-measure-'));
  const out = join(d, 'time');
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', '-o', out, ...argv], {
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const last = readFileSync(out, 'utf8').trim().split('\n').pop() ?? '0 0 0';
  const [kib, user, sys] = last.split(' ').map(Number) as [number, number, number];
  rmSync(d, { recursive: true, force: true });
  return { wallS, cpuS: user + sys, peakRssMiB: kib / 1024, status: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}
