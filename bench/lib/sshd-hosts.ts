// Starts N real OpenSSH "hosts" on loopback for benchmarks: one sshd process per 10 ports
// (sshd accepts at most 16 Port lines), a fresh host key and client key, and the files every
// peer needs (inventory, known_hosts). Root only; everything is stopped by close().
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SshdHosts {
  dir: string;
  user: string;
  ports: number[];
  clientKey: string;
  knownHosts: string;
  close(): void;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A dedicated login with a plain /bin/sh and no rc files: root's interactive setup here (pyenv)
 * costs ~0.5 s per SSH session, which would drown the runner overhead being measured.
 */
function benchUser(): string {
  const name = 'tsbm-bench';
  try {
    execFileSync('id', [name], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['-M', '-d', '/tmp', '-s', '/bin/sh', name]);
  }
  execFileSync('usermod', ['-p', '*', name]); // a locked account is refused even with a key (UsePAM no)
  return name;
}

export async function startSshdHosts(n: number): Promise<SshdHosts> {
  const dir = mkdtempSync(join(tmpdir(), 'tsbm-bench-'));
  const user = benchUser();
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'client_key')]);
  execFileSync('chmod', ['755', dir]);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_key.pub')));
  execFileSync('mkdir', ['-p', '/run/sshd']);
  const ports: number[] = [];
  for (let i = 0; i < n; i++) ports.push(await freePort());
  const pids: number[] = [];
  for (let i = 0; i < ports.length; i += 10) {
    const chunk = ports.slice(i, i + 10);
    const cfg = join(dir, `sshd_config_${i}`);
    writeFileSync(
      cfg,
      [
        ...chunk.map((p) => `Port ${p}`),
        'ListenAddress 127.0.0.1',
        `HostKey ${join(dir, 'host_key')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        `PidFile ${join(dir, `sshd_${i}.pid`)}`,
        'UsePAM no',
        'StrictModes no',
        'PasswordAuthentication no',
        'MaxSessions 100',
        'MaxStartups 200',
        'LogLevel ERROR',
        '',
      ].join('\n'),
    );
    const child = spawn('/usr/sbin/sshd', ['-D', '-f', cfg, '-E', join(dir, `sshd_${i}.log`)], { stdio: 'ignore' });
    if (child.pid) pids.push(child.pid);
  }
  const hostPub = readFileSync(join(dir, 'host_key.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, ports.map((p) => `[127.0.0.1]:${p} ${hostPub}`).join('\n') + '\n');
  // Wait until every port accepts.
  const deadline = Date.now() + 10_000;
  for (const p of ports) {
    while (Date.now() < deadline) {
      try {
        execFileSync('bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${p}`], { stdio: 'ignore' });
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  return {
    dir,
    user,
    ports,
    clientKey: join(dir, 'client_key'),
    knownHosts,
    close() {
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
