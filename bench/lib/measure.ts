// Runs a command under GNU time and returns wall seconds and peak RSS (MiB) of the process tree's
// largest process, so every peer is measured the same way in the same process tree.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Measured {
  wallS: number;
  peakRssMiB: number;
  status: number;
  output: string;
}

export function measure(argv: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Measured {
  const d = mkdtempSync(join(tmpdir(), 'tsbm-measure-'));
  const out = join(d, 'time');
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', '-o', out, ...argv], {
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const kib = Number(readFileSync(out, 'utf8').trim().split('\n').pop());
  rmSync(d, { recursive: true, force: true });
  return { wallS, peakRssMiB: kib / 1024, status: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}
