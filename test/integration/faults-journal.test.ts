// Faults around the run's own bookkeeping, through the built CLI against the simulated lab:
// two runs wanting one node (the second is refused, naming the holder's run id, and touches
// nothing), and a journal directory that fills up mid-run (root only: a tiny tmpfs) where the
// run must stop before doing remote work it cannot record.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bmcLockKey } from '../../src/journal/node-key.js';
import { readJournal } from '../../src/journal/reader.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { DEPLOY, failuresOf, runTsbm, spawnTsbm, stateArgs, locksLeft } from '../helpers/fault-cli.js';
import { flushFaultRows, recordFault, tryFault } from '../helpers/fault-table.js';

const SOURCE = 'faults-journal';
const isRoot = process.getuid?.() === 0;

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
  flushFaultRows(SOURCE);
});

async function newLab(prefix: string, nodes: number, bootDelayMs: number): Promise<{ lab: Lab; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const lab = await startLab({ nodes, dir, bootDelayMs, powerDelayMs: 30 });
  cleanup.push(async () => {
    await lab.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { lab, dir };
}

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('node locks through the CLI', () => {
  it('a second run on a locked node names the holder run id, exits non-zero and touches nothing', async () => {
    await tryFault(
      SOURCE,
      { fault: 'two runs, one node', how: 'run A deploys node01; run B targets node01+node02 meanwhile', cases: 1, outcome: 'B refused before any task, naming A\'s run id, exit non-zero; A deployed; no locks left' },
      async () => {
        const { lab, dir } = await newLab('tsbm-lock-', 2, 2500);
        const state = stateArgs(dir);
        // Locks are named after the machine: the node's BMC address.
        const lockOf = (i: number) => join(dir, 'locks', `${encodeURIComponent(bmcLockKey(`https://127.0.0.1:${lab.nodes[i]!.cfg.bmcPort}`)!)}.lock`);
        const lockFile = lockOf(0);
        const a = spawnTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', '--limit', 'node01', ...state.args], { cwd: dir, env: state.env });
        await until(() => existsSync(lockFile), 20_000);
        const holder = JSON.parse(readFileSync(lockFile, 'utf8')) as { runId: string; pid: number };
        expect(holder.pid).toBe(a.child.pid);

        const b = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', ...state.args], { cwd: dir, env: state.env });
        expect(b.code).not.toBe(0);
        expect(b.stdout + b.stderr).toContain(`locked by run ${holder.runId}`);
        expect(b.stderr).not.toMatch(/\n\s+at /);
        expect(b.events.filter((e) => e.type === 'host_task_start')).toEqual([]);
        // B's failure released what it took: node02 is free while A still runs.
        expect(existsSync(lockOf(1))).toBe(false);
        expect(existsSync(lockFile)).toBe(true);

        const ra = await a.done;
        expect(ra.code, ra.stderr).toBe(0);
        expect((await lab.nodes[0]!.diskLayout()).partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
        expect((await lab.nodes[1]!.diskLayout()).partitions).toEqual([]);
        expect(lab.nodes[1]!.phase).toBe('off');
        expect(locksLeft(join(dir, 'locks'))).toEqual([]);
      },
    );
  }, 120_000);
});

describe('journal directory unusable at start', () => {
  it('the run refuses before any task (the journal cannot be opened)', async () => {
    await tryFault(
      SOURCE,
      { fault: 'journal directory unusable', how: '--journal-dir under a regular file (ENOTDIR)', cases: 1, outcome: 'refused with "cannot open the run journal" and a hint; no task started; nothing touched' },
      async () => {
        const dir = mkdtempSync(join(tmpdir(), 'tsbm-nojournal-'));
        cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
        const inventory = join(dir, 'inv.yml');
        const playbook = join(dir, 'touch.yml');
        const marker = join(dir, 'touched');
        writeFileSync(inventory, 'all:\n  hosts:\n    alpha:\n      connection: local\n');
        writeFileSync(playbook, `- hosts: all\n  tasks:\n    - name: Touch\n      command: touch ${marker}\n`);
        writeFileSync(join(dir, 'file'), '');
        const env = { ...process.env, TSBM_LOCK_DIR: join(dir, 'locks') };
        const r = await runTsbm(['run', playbook, '-i', inventory, '--output', 'json', '--journal-dir', join(dir, 'file', 'runs')], { cwd: dir, env });
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/cannot (open|create) the run journal/);
        expect(r.stderr).toMatch(/--journal-dir|--no-journal/);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.events.filter((e) => e.type === 'host_task_start')).toEqual([]);
        expect(existsSync(marker)).toBe(false);
      },
    );
  });
});

describe('journal directory runs out of space', () => {
  if (!isRoot) {
    recordFault(SOURCE, { fault: 'disk full on the journal directory', how: '--journal-dir on a 24 KiB tmpfs', cases: 0, outcome: 'not run: mounting a tmpfs needs root', result: 'skipped' });
  }
  it.skipIf(!isRoot)('(needs root: mounts a tiny tmpfs) the run stops cleanly; no remote task runs unrecorded', async () => {
    await tryFault(
      SOURCE,
      { fault: 'disk full on the journal directory', how: '--journal-dir on a 24 KiB tmpfs, 2-node deploy', cases: 1, outcome: 'run stopped with "no space left", exit non-zero, every task that ran has its start in the journal, locks released' },
      async () => {
        const { lab, dir } = await newLab('tsbm-enospc-', 2, 150);
        const journalDir = join(dir, 'tiny');
        mkdirSync(journalDir);
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24k,mode=0700', 'tsbm-test-tiny', journalDir]);
        cleanup.push(() => {
          execFileSync('umount', [journalDir]);
        });
        const env = { ...process.env, TSBM_LOCK_DIR: join(dir, 'locks') };
        const r = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', '--journal-dir', journalDir], { cwd: dir, env, timeoutMs: 120_000 });
        expect(r.signal, 'hung').toBeNull();
        expect(r.code).not.toBe(0);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.stdout + r.stderr).toMatch(/no space left/);

        const files = readdirSync(journalDir).filter((f) => f.endsWith('.jsonl'));
        expect(files.length).toBe(1);
        const journal = readJournal(join(journalDir, files[0]!));
        const recorded = new Set(journal.records.flatMap((x) => (x.type === 'host_task_start' ? [`${x.host} ${x.taskId}`] : [])));
        // Every task that did anything had its start on disk first; the rest never started.
        const ran = r.events.filter((e) => e.type === 'host_result' && !(e.status === 'skipped' && /not started/.test(e.msg ?? '')));
        expect(ran.length).toBeGreaterThan(0);
        for (const e of ran) expect(recorded.has(`${e.host} ${e.taskId}`), `${e.host}: ${e.task} ran unrecorded`).toBe(true);
        expect(r.events.some((e) => e.type === 'host_result' && /not started/.test(e.msg ?? ''))).toBe(true);
        expect(failuresOf(r).size + r.events.filter((e) => e.type === 'warning' && /run stopped/.test(String(e.message))).length).toBeGreaterThan(0);
        expect(locksLeft(join(dir, 'locks'))).toEqual([]);
      },
    );
  }, 150_000);
});
