// SSH dropped mid-command, through the built CLI against two in-process SSH hosts: the task
// reconnects and runs again when its module declares itself idempotent (wait_for), and fails
// the host as unreachable when it does not (command), never hanging; the other host completes.
// The commands block on a FIFO, so the drop (server side) lands while a command is running.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { failuresOf, runTsbm } from '../helpers/fault-cli.js';
import { flushFaultRows, tryFault } from '../helpers/fault-table.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';

const SOURCE = 'faults-ssh-drop';
const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
  flushFaultRows(SOURCE);
});

describe('SSH connection dropped mid-command', () => {
  it('idempotent task reconnects and runs again once; a non-idempotent one fails the host; the other host completes', async () => {
    await tryFault(
      SOURCE,
      {
        fault: 'SSH dropped mid-command (real sshd-side drop)',
        how: 'server drops the connection while `cat FIFO` blocks: once under wait_for (idempotent), once under command',
        cases: 2,
        outcome: 'wait_for reconnected and ran again once (ok); command ran once and the host went unreachable with "lost"; other host ok; no hang',
      },
      async () => {
        const dir = mkdtempSync(join(tmpdir(), 'tsbm-sshdrop-'));
        cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
        const fifo1 = join(dir, 'flag1');
        const fifo2 = join(dir, 'flag2');
        execFileSync('mkfifo', [fifo1, fifo2]);
        // The healthy host reads plain files.
        const plain1 = join(dir, 'plain1');
        const plain2 = join(dir, 'plain2');
        writeFileSync(plain1, 'ready\n');
        writeFileSync(plain2, 'fine\n');

        let bad: SshHost | undefined;
        const dropWhen = (needle: string, after?: () => void) => {
          let done = false;
          return (cmd: string) => {
            if (done || !cmd.includes(needle)) return;
            done = true;
            setTimeout(() => {
              bad!.server.dropConnections();
              after?.();
            }, 300);
          };
        };
        const onFlag1 = dropWhen(fifo1, () => {
          // The rerun finds a plain file with the expected content.
          unlinkSync(fifo1);
          writeFileSync(fifo1, 'ready\n');
        });
        const onFlag2 = dropWhen(fifo2);
        bad = await startSshHost({ name: 'bad', onCommand: (c) => {
            onFlag1(c);
            onFlag2(c);
          },
        });
        const good = await startSshHost({ name: 'good' });
        cleanup.push(() => bad!.close(), () => good.close());

        const host = (h: SshHost, f1: string, f2: string) => ({
          ssh_host: '127.0.0.1',
          ssh_port: h.spec.port,
          ssh_user: h.spec.user,
          ssh_private_key_file: h.spec.privateKeyFile,
          ssh_known_hosts_file: h.spec.knownHostsFile,
          flag1: f1,
          flag2: f2,
        });
        const inventory = join(dir, 'inventory.yml');
        writeFileSync(inventory, stringify({ all: { hosts: { bad: host(bad, fifo1, fifo2), good: host(good, plain1, plain2) } } }));
        const playbook = join(dir, 'drop.yml');
        writeFileSync(
          playbook,
          stringify([
            {
              name: 'drops',
              hosts: 'all',
              tasks: [
                { name: 'Wait for the flag', wait_for: { path: '{{ flag1 }}', search_regex: 'ready', timeout: 20, sleep: 0.2 } },
                { name: 'Read the second pipe', command: 'cat {{ flag2 }}' },
              ],
            },
          ]),
        );
        const env = { ...process.env, TSBM_LOCK_DIR: join(dir, 'locks') };
        const r = await runTsbm(['run', playbook, '-i', inventory, '--output', 'json', '--journal-dir', join(dir, 'runs')], { cwd: dir, env, timeoutMs: 60_000 });
        expect(r.signal, 'the runner hung').toBeNull();
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.code).toBe(4); // an unreachable host
        const results = r.events.filter((e) => e.type === 'host_result');
        const of = (h: string, t: string) => results.filter((e) => e.host === h && e.task === t);
        expect(of('bad', 'Wait for the flag').map((e) => e.status)).toEqual(['ok']);
        expect(bad.commands.filter((c) => c.includes(fifo1)).length, 'wait_for ran again exactly once').toBe(2);
        const f = failuresOf(r).get('bad');
        expect(f?.task).toBe('Read the second pipe');
        expect(f?.status).toBe('unreachable');
        expect(f?.msg).toMatch(/lost/i);
        expect(bad.commands.filter((c) => c.includes(fifo2)).length, 'command is not re-run').toBe(1);
        expect(failuresOf(r).has('good')).toBe(false);
        expect(of('good', 'Read the second pipe').map((e) => e.status)).toEqual(['changed']);
      },
    );
  }, 90_000);
});
