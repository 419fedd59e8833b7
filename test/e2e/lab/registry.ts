// A real docker-registry with htpasswd auth, listening on a test-owned address, and a
// registries.conf.d drop-in marking it insecure (plain HTTP) for podman. Stopped by the test.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sh } from './run.js';

export interface Registry {
  /** host:port, as image references and auth files name it. */
  address: string;
  user: string;
  password: string;
  /** A podman auth file with the right credentials. */
  authFile: string;
  stop(): Promise<void>;
}

export function authJson(address: string, user: string, password: string): string {
  return JSON.stringify({
    auths: { [address]: { auth: Buffer.from(`${user}:${password}`).toString('base64') } },
  });
}

async function waitHttp(
  url: string,
  timeoutMs: number,
  proc: ChildProcess,
  log: () => string,
): Promise<void> {
  const start = Date.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`lab: docker-registry exited (${proc.exitCode}): ${log()}`);
    try {
      const r = await fetch(url);
      if (r.status === 401 || r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() - start > timeoutMs)
      throw new Error(`lab: registry at ${url} did not answer in ${timeoutMs} ms: ${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRegistry(
  dir: string,
  host: string,
  port: number,
  user = 'tester',
  password = 's3cret-pull-pw',
): Promise<Registry> {
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const htpasswd = join(dir, 'htpasswd');
  writeFileSync(htpasswd, sh(['htpasswd', '-Bbn', user, password]).stdout);
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'storage')}`,
      'http:',
      `  addr: ${host}:${port}`,
      'auth:',
      '  htpasswd:',
      '    realm: tsbm-test',
      `    path: ${htpasswd}`,
      '',
    ].join('\n'),
  );
  const address = `${host}:${port}`;
  const dropIn = `/etc/containers/registries.conf.d/tsbm-test-${process.pid}-${port}.conf`;
  mkdirSync('/etc/containers/registries.conf.d', { recursive: true });
  writeFileSync(dropIn, `[[registry]]\nlocation = "${address}"\ninsecure = true\n`);
  const authFile = join(dir, 'auth.json');
  writeFileSync(authFile, authJson(address, user, password), { mode: 0o600 });
  let output = '';
  const proc = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout?.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  });
  proc.stderr?.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  });
  const stop = async () => {
    rmSync(dropIn, { force: true });
    if (proc.exitCode === null) {
      const done = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  };
  try {
    await waitHttp(`http://${address}/v2/`, 20_000, proc, () => output);
  } catch (e) {
    await stop();
    throw e;
  }
  return { address, user, password, authFile, stop };
}
