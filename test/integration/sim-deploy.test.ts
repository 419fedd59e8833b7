// The simulated lab end to end: the shipped deploy-bootc.yml through the built CLI against
// simulated nodes (fake BMCs + sandboxed ramdisks), and each injected fault failing exactly the
// node it was injected into, with the right message, while the others finish.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const TSBM = join(ROOT, 'bin', 'tsbm.js');

interface HostResult {
  type: string;
  host: string;
  task: string;
  status: string;
  msg?: string;
}

async function deploy(lab: Lab, extra: string[] = []) {
  const r = await run(
    'node',
    [TSBM, 'run', join(ROOT, 'playbooks/deploy-bootc.yml'), '-i', lab.inventory, '--output', 'json', ...extra],
    { maxBuffer: 64 * 1024 * 1024, timeout: 240_000 },
  ).then(
    (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  const events = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as HostResult & Record<string, unknown>);
  const failures = new Map<string, HostResult>();
  // Where each host fell: its first failure (the rescue handles it: status rescued; the
  // cleanup then fails the host at the end).
  const firstFailures = new Map<string, HostResult>();
  for (const e of events) {
    if (e.type !== 'host_result' || !['failed', 'rescued', 'unreachable'].includes(e.status)) continue;
    if (e.status !== 'rescued') failures.set(e.host, e);
    if (!firstFailures.has(e.host)) firstFailures.set(e.host, e);
  }
  const recap = events.find((e) => e.type === 'recap') as unknown as { stats: Record<string, { failed: number; unreachable: number; ok: number }> } | undefined;
  return { ...r, events, failures, firstFailures, recap };
}

describe('simulated lab: deploy-bootc.yml', () => {
  let dir: string;
  let lab: Lab;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-simdeploy-'));
    lab = await startLab({ nodes: 3, dir, bootDelayMs: 200, powerDelayMs: 50 });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deploys three nodes: GPT from bootc, a config-2 partition, the instance reads its meta_data.json', async () => {
    const report = join(dir, 'report.html');
    const r = await deploy(lab, ['-e', '{"wait_for_instance": true, "instance_ssh_timeout": 60}', '--report', report, '-vvv']);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect([...r.failures.values()]).toEqual([]);
    expect(r.code).toBe(0);
    expect(Object.keys(r.recap!.stats).sort()).toEqual(['node01', 'node02', 'node03']);
    for (const n of lab.nodes) {
      const layout = await n.diskLayout();
      expect(layout.partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
      const diskBytes = n.cfg.diskBytes;
      const cfg = layout.partitions[2]!;
      expect(cfg.startBytes).toBeGreaterThanOrEqual(diskBytes - 66 * 1024 * 1024);
      const meta = JSON.parse(readFileSync(join(n.cfg.dir, 'instance/mnt/config/openstack/latest/meta_data.json'), 'utf8'));
      expect(meta.name).toBe(n.cfg.name);
      expect(readFileSync(join(n.root, 'sim/bootc-count'), 'utf8').trim()).toBe('1');
      const args = readFileSync(join(n.root, 'sim/bootc-args'), 'utf8');
      expect(args).toMatch(/--wipe --skip-fetch-check --root-size=\d+M/);
      expect(args).toContain('--root-ssh-authorized-keys=');
      expect(n.phase).toBe('instance');
    }
    // The pull's memory check went by the manifest the preflight read on the controller: no
    // manifest probe on any ramdisk; the only image inspect is bootc_install's.
    for (const n of lab.nodes) {
      const ran = r.events.filter((e) => e.type === 'log' && e.host === n.cfg.name && String(e.message).startsWith('exec: ')).map((e) => String(e.message));
      expect(ran.join('\n')).toMatch(/podman pull /);
      expect(ran.filter((c) => /manifest inspect|skopeo inspect/.test(c))).toEqual([]);
      expect(ran.join('\n').match(/podman image inspect/g)).toHaveLength(1);
      const pulled = r.events.find((e) => e.type === 'host_result' && e.host === n.cfg.name && e.task === 'Pull the image') as { result?: Record<string, unknown> } | undefined;
      expect(pulled?.result).toMatchObject({ compressed_bytes: 620 * 1048576 + 1024 });
    }
    // The pull secret never reached an output line, and its auth file is gone.
    const secret = readFileSync(lab.inventory, 'utf8').match(/image_pull_secret: (\S+)/)![1]!;
    const html = readFileSync(report, 'utf8');
    for (const text of [r.stdout, html]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(Buffer.from(secret, 'base64').toString());
    }
    expect(html).toContain('Pull the image');
    for (const n of lab.nodes) {
      // No file left in the secret directories (one per node, /run/tsbm/<name>, kept empty).
      const runDir = join(n.root, 'run/tsbm');
      const left = existsSync(runDir) ? readdirSync(runDir, { recursive: true, withFileTypes: true }).filter((d) => !d.isDirectory()) : [];
      expect(left.map((d) => d.name)).toEqual([]);
    }
  }, 240_000);
});

describe('simulated lab: faults fail only their node, with the right message', () => {
  let dir: string;
  let lab: Lab;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-simfaults-'));
    lab = await startLab({
      nodes: 7,
      dir,
      bootDelayMs: 200,
      powerDelayMs: 50,
      faults: 'node02:never_boots;node03:pull_fail;node04:bootc_fail;node05:wrong_uuid;node06:bmc_503=1;node07:ssh_drop=3',
    });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each fault lands on its node; node01 deploys', async () => {
    const r = await deploy(lab, ['-e', '{"agent_timeout": 6}']);
    expect(r.code).toBe(4); // unreachable hosts win over failed ones, as in ansible-playbook
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const f = (h: string) => r.failures.get(h);
    const at = (h: string) => r.firstFailures.get(h)?.task;
    expect(f('node01')).toBeUndefined();
    expect(at('node02')).toMatch(/Wait for the ramdisk/);
    expect(f('node02')?.msg).toMatch(/timed out|did not answer|waited/i);
    expect(at('node03')).toMatch(/Pull the image/);
    expect(f('node03')?.msg).toMatch(/simulated pull failure/);
    expect(at('node04')).toMatch(/Install the image/);
    expect(f('node04')?.msg).toMatch(/simulated failure/);
    expect(at('node05')).toMatch(/Wait for the ramdisk/);
    expect(f('node05')?.msg).toMatch(/UUID/i);
    // A failure after the ramdisk boot is cleaned up, and the last message says so.
    for (const h of ['node02', 'node03', 'node04', 'node05']) expect(f(h)?.msg, h).toMatch(/node powered off, virtual media ejected/);
    // A BMC answering only 503 is caught by the preflight, before anything is asked of it.
    expect(at('node06')).toMatch(/Check the node before touching it/);
    expect(f('node06')?.msg).toMatch(/503|unavailable/i);
    expect(f('node07')).toBeDefined();
    // Refused before anything destructive: the wrong machine's disk was never touched.
    expect((await lab.nodes[4]!.diskLayout()).partitions).toEqual([]);
    expect((await lab.nodes[0]!.diskLayout()).partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
  }, 240_000);
});

// The nodes' paths go into shell text on the simulated ramdisk (rewritten command lines, the
// sourced node.env): a lab directory a shell would split works through a plain-named link.
describe('simulated lab in a directory with a space and shell characters', () => {
  let dir: string;
  let lab: Lab;
  beforeAll(async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'tsbm-simspace-')), `my lab's "x" $HOME`);
    lab = await startLab({ nodes: 1, dir, bootDelayMs: 200, powerDelayMs: 50 });
  });
  afterAll(async () => {
    await lab?.close();
    rmSync(resolve(dir, '..'), { recursive: true, force: true });
  });

  it('deploys; the disk in the lab directory holds the GPT and config drive; the link goes with the lab', async () => {
    expect(lab.inventory).toBe(join(dir, 'inventory.yml'));
    const r = await deploy(lab);
    expect([...r.failures.values()]).toEqual([]);
    expect(r.code).toBe(0);
    const [n] = lab.nodes;
    expect(n!.root).not.toContain(' ');
    expect(existsSync(join(dir, 'nodes', 'node01', 'root', 'dev', 'vda'))).toBe(true);
    expect((await n!.diskLayout()).partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
    const link = resolve(n!.root, '..', '..', '..');
    await lab.close();
    expect(existsSync(link)).toBe(false);
    expect(existsSync(dir)).toBe(true);
  }, 120_000);
});
