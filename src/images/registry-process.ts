// One docker-registry process (Debian's `docker-registry`, the CNCF distribution registry) for
// the run's image mirror: its config written to a 0600 file, started, waited for until /v2/
// answers, and stopped with everything it wrote. src/images/oci-mirror.ts runs two of them on
// one storage: a writable one on loopback that tsbm fills, a read-only one the ramdisks pull from.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { TsbmError } from '../errors.js';

export interface RegistryProcess {
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Starts `program serve <dir>/<name>.yml` with `config`, listening on `address` (host:port), and
 * resolves once /v2/ answers (401 or 200). A process that exits first, or does not answer within
 * 30 s, is a TsbmError naming `what` and the registry's own words.
 */
export async function startRegistryProcess(program: string, dir: string, name: string, config: Record<string, unknown>, address: string, what: string): Promise<RegistryProcess> {
  const configFile = join(dir, `${name}.yml`);
  writeFileSync(configFile, stringify(config), { mode: 0o600 });
  let output = '';
  const proc: ChildProcess = spawn(program, ['serve', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const hard = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(hard);
    }
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      await stop();
      const said = output.split('\n').find((l) => /panic:|level=fatal|error/i.test(l))?.replace(/^time="[^"]*" /, '') ?? output.trim().split('\n').pop() ?? '';
      throw new TsbmError('runtime', `${what} (${program}) did not start: ${said.slice(0, 400)}`, {
        hint: /bind|address already in use|cannot assign/i.test(said)
          ? `check image_mirror_address (${address}): a free port on an address of this controller`
          : 'see the message; image_download_source: http pulls without the mirror',
      });
    }
    try {
      const r = await fetch(`http://${address}/v2/`);
      if (r.status === 401 || r.ok) return { stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new TsbmError('runtime', `${what} did not answer on ${address} within 30 s`, { hint: 'check image_mirror_address' });
    }
    await sleep(100);
  }
}
