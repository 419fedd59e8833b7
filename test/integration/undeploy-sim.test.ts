// undeploy.yml on the simulated lab, through the built CLI: after a deploy, the node boots the
// ramdisk, the disk the root device hints choose loses its partition table and signatures
// (first and last MiB of the disk and of every partition read back as zeros), and the node
// ends off, media ejected, boot override cleared. undeploy_erase_disk: false leaves the disk.
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Partition } from '../../packages/lab/src/lab/disk-layout.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { SimNode } from '../../packages/lab/src/lab/node.js';
import { type CliRun, DEPLOY, ROOT, runTsbm, stateArgs } from '../helpers/fault-cli.js';

const UNDEPLOY = join(ROOT, 'playbooks', 'undeploy.yml');
const MiB = 1024 * 1024;

let dir: string;
let lab: Lab;
const node = (name: string): SimNode => lab.nodes.find((n) => n.cfg.name === name)!;

function allZero(file: string, offset: number, length: number): boolean {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(length);
    readSync(fd, b, 0, length, offset);
    return b.every((x) => x === 0);
  } finally {
    closeSync(fd);
  }
}

async function run(playbook: string, extra: string[]): Promise<CliRun> {
  const s = stateArgs(dir);
  return runTsbm(['run', playbook, '-i', lab.inventory, '--output', 'json', ...s.args, ...extra], { cwd: dir, env: s.env, timeoutMs: 150_000 });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-undeploy-'));
  lab = await startLab({ nodes: 2, dir: join(dir, 'lab'), bootDelayMs: 150, powerDelayMs: 30 });
  const d = await run(DEPLOY, []);
  expect(d.code, d.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('undeploy.yml', () => {
  it('erases the root disk from the ramdisk: no partition table, no signatures; the node ends off, ejected, override cleared', async () => {
    const n = node('node01');
    const before: Partition[] = (await n.diskLayout()).partitions;
    expect(before.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
    expect(allZero(n.diskFile, 0, MiB)).toBe(false);
    const resets = n.bmc!.state.resets.length;

    const r = await run(UNDEPLOY, ['-l', 'node01']);
    expect(r.code, r.stderr).toBe(0);
    const erase = r.events.find((e) => e.type === 'host_result' && e.task === "Erase the root disk's partition tables and signatures");
    expect(erase?.status).toBe('changed');
    expect(erase?.msg).toMatch(/^erased \/dev\/vda: 3 partition\(s\), \d+ range\(s\) of up to 1 MiB/);
    // The ramdisk was checked for what the erase needs (no podman), not for a bootc deploy.
    const agent = r.events.find((e) => e.type === 'host_result' && e.task === 'Wait for the ramdisk and check it is this node');
    expect((agent?.result as { ramdisk_contract?: unknown } | undefined)?.ramdisk_contract).toMatchObject({ deploy: 'undeploy' });

    const after = await n.diskLayout();
    expect(after.table).toBe('none');
    expect(after.partitions).toEqual([]);
    const size = n.cfg.diskBytes;
    expect(allZero(n.diskFile, 0, MiB), 'disk head (MBR, primary GPT)').toBe(true);
    expect(allZero(n.diskFile, size - MiB, MiB), 'disk tail (backup GPT)').toBe(true);
    for (const p of before) {
      expect(allZero(n.diskFile, p.startBytes, Math.min(MiB, p.sizeBytes)), `${p.name} head`).toBe(true);
      expect(allZero(n.diskFile, p.startBytes + p.sizeBytes - MiB, MiB), `${p.name} tail`).toBe(true);
    }
    const st = await n.status();
    expect(st).toMatchObject({ power: 'Off', media: '', bootOverride: 'None/Disabled' });
    // It booted the ramdisk to erase (power on), then powered off.
    expect(n.bmc!.state.resets.slice(resets)).toEqual(['ForceOff', 'On', 'ForceOff']);
  }, 120_000);

  it('undeploy_erase_disk: false powers off, ejects and clears the override, and leaves the disk alone', async () => {
    const n = node('node02');
    expect((await n.status()).bootOverride).toBe('Hdd/Continuous');
    const resets = n.bmc!.state.resets.length;
    const r = await run(UNDEPLOY, ['-l', 'node02', '-e', 'undeploy_erase_disk=false']);
    expect(r.code, r.stderr).toBe(0);
    expect((await n.diskLayout()).partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
    expect(await n.status()).toMatchObject({ power: 'Off', media: '', bootOverride: 'None/Disabled' });
    expect(n.bmc!.state.resets.slice(resets)).toEqual(['ForceOff']);
    const pre = r.events.find((e) => e.type === 'host_result' && e.task === 'Check the node before touching it (BMC, image, ISO)');
    expect(pre?.msg).not.toMatch(/ramdisk_iso/); // no ramdisk needed, so its ISO is not asked for
  }, 60_000);
});
