// The README's sample run (the block between `<!-- tsbm:sample-run -->` markers) against what a
// run of the same command prints: every host line's message (sizes, names, wording), every
// task's name and counts, the progress line shown live, and the recap. Only what changes from
// run to run is set aside: durations, loopback ports and content hashes.
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { scratchDirs } from '../helpers/scratch.js';
import { runCli } from '../helpers/tsbm-cli.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const scratch = scratchDirs();

/** What differs between two runs of the same deploy. */
const normal = (s: string) =>
  s
    .replace(/\b\d+(\.\d+)?s\b/g, 'Ns')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
    .replace(/\b[0-9a-f]{12}…/g, 'HASH…')
    .trim();

interface Sample {
  command: string;
  /** task → its counts as the tree's task line shows them, e.g. "3 changed". */
  tasks: Map<string, string>;
  /** "task / host" → the host line's status and message. */
  hosts: Map<string, string>;
  /** Progress messages shown under a running host. */
  live: string[];
  recap: string[];
}

function readSample(readme: string): Sample {
  const block = /<!-- tsbm:sample-run -->\n```\n([\s\S]*?)```\n<!-- \/tsbm:sample-run -->/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no <!-- tsbm:sample-run --> block');
  const lines = block.split('\n');
  const sample: Sample = { command: '', tasks: new Map(), hosts: new Map(), live: [], recap: [] };
  let task = '';
  let host: string | undefined;
  for (const line of lines) {
    if (line.startsWith('$ ')) sample.command = line.slice(2);
    let m = /^[✔↓✖❯] (.+?) {2}[\d.]+s(?: {2}\((.+)\))?/.exec(line);
    if (m) {
      task = m[1]!;
      if (m[2]) sample.tasks.set(task, m[2]);
      host = undefined;
      continue;
    }
    m = /^ {4}[✔↓✖] (node\d+) {2}(ok|changed|skipped|failed) [\d.]+s(?:: (.*))?$/.exec(line);
    if (m) {
      host = `${task} / ${m[1]}`;
      sample.hosts.set(host, `${m[2]}: ${m[3] ?? ''}`.trim());
      continue;
    }
    m = /^ {8}› (.*)$/.exec(line);
    if (m) {
      sample.live.push(`${task}: ${m[1]}`);
      continue;
    }
    // A message wrapped to the terminal's width continues, indented, under its host line.
    if (host && /^ {8}\S/.test(line)) {
      sample.hosts.set(host, `${sample.hosts.get(host)} ${line.trim()}`);
      continue;
    }
    host = undefined;
    if (/^node\d+ : ok=/.test(line)) sample.recap.push(line);
  }
  return sample;
}

it("the README's sample run says what a run of its command prints", () => {
  const sample = readSample(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  expect(sample.command).toBe('node bin/tsbm.js run playbooks/deploy-bootc.yml -i inventory-examples/sim.yml');
  expect(sample.hosts.size).toBeGreaterThan(8);

  // The same command in a directory of its own (the one-run lab keeps its disks under .tsbm/).
  const dir = scratch('tsbm-readme-sample-');
  mkdirSync(join(dir, 'inventory-examples'));
  cpSync(join(ROOT, 'inventory-examples/sim.yml'), join(dir, 'inventory-examples/sim.yml'));
  cpSync(join(ROOT, 'playbooks'), join(dir, 'playbooks'), { recursive: true });
  const r = runCli(['run', 'playbooks/deploy-bootc.yml', '-i', 'inventory-examples/sim.yml', '--journal-dir', join(dir, 'runs')], {
    cwd: dir,
    home: join(dir, 'home'),
    env: { CI: 'true', TSBM_LOCK_DIR: join(dir, 'locks') },
    timeoutMs: 300_000,
  });
  expect(r.code, r.all.slice(-3000)).toBe(0);

  // Plain output: `changed: [node01] Pull the image (0.4s): pulled ...`, one line per host result.
  const ran = new Map<string, string>();
  const counts = new Map<string, Map<string, number>>();
  for (const line of r.stdout.split('\n')) {
    const m = /^(ok|changed|skipped|failed): \[(node\d+)\] (.+?) \(\d+(?:\.\d+)?s\)(?:: (.*))?$/.exec(line);
    if (!m) continue;
    const [, status, node, task, msg] = m as unknown as [string, string, string, string, string | undefined];
    // A skip's reason is Ansible's conditional text: the tree shows the status alone.
    ran.set(`${task} / ${node}`, status === 'skipped' ? 'skipped:' : `${status}: ${msg ?? ''}`.trim());
    const c = counts.get(task) ?? new Map<string, number>();
    c.set(status, (c.get(status) ?? 0) + 1);
    counts.set(task, c);
  }
  for (const [key, shown] of sample.hosts) {
    expect({ key, line: normal(ran.get(key) ?? '(no such result in the run)') }).toEqual({ key, line: normal(shown) });
  }
  for (const [task, shown] of sample.tasks) {
    const c = [...(counts.get(task) ?? new Map<string, number>())].map(([s, n]) => `${n} ${s}`).join(', ');
    expect({ task, counts: c }).toEqual({ task, counts: shown });
  }
  for (const live of sample.live) {
    const [task, message] = [live.slice(0, live.indexOf(': ')), live.slice(live.indexOf(': ') + 2)];
    expect(r.stdout).toContain(`] ${task}: ${message}`);
  }
  const recap = r.stdout.split('\n').filter((l) => /^node\d+ : ok=/.test(l));
  expect(recap).toEqual(sample.recap);
}, 360_000);
