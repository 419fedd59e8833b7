// Deploys on real firmware: the lab's nodes as QEMU virtual machines with OVMF (UEFI, TCG where
// there is no usable KVM) behind the fake BMC (`machines: 'qemu'`). `tsbm run
// playbooks/deploy-image.yml` on two VMs at once: the BMC inserts a test ramdisk ISO (this
// machine's kernel, busybox, dropbear and the programs docs/ramdisk.md lists) that the firmware
// boots from the CD; tsbm reaches it over SSH, checks it is the node (SMBIOS UUID, MACs), streams
// a UEFI-bootable whole-disk image built here onto the virtio disk, writes the config drive, and
// boots the node from the disk. The instance's init prints its config drive's meta_data.json on
// the serial console: the test reads each node's report there. `undeploy.yml` then erases both
// disks. Last, a node given a medium its firmware cannot boot fails at wait_agent with the last
// lines of its console in the message. Step times (boot to SSH, write, boot from disk) are
// printed for docs/performance.md.
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { findOvmf } from '../../packages/lab/src/vm/qemu-argv.js';
import { buildIso } from '../../src/configdrive/iso9660.js';
import { findProgram } from '../../src/util/find-program.js';
import { scratchDirs } from '../helpers/scratch.js';
import { repoRoot, runCli } from './lab/run.js';
import { buildInstanceImage, buildTestRamdisk, instanceReport, vmImageTools } from './lab/vm-images.js';

const missing = [
  !findProgram('qemu-system-x86_64') && 'qemu-system-x86_64 (qemu-system-x86)',
  !findOvmf() && 'OVMF (ovmf)',
  ...vmImageTools(),
].filter(Boolean);
const reason = missing.length ? ` (skipped: needs ${missing.join(', ')})` : '';
if (missing.length) console.warn(`deploy-vm e2e skipped: needs ${missing.join(', ')}`);

const scratch = scratchDirs();
const ROOT = repoRoot();
let lab: Lab | undefined;
let files: Server | undefined;
let dir: string;
let filesPort: number;
let image: { file: string; sha256: string };

interface Event {
  type: string;
  host?: string;
  task?: string;
  taskId?: string;
  module?: string;
  status?: string;
  msg?: string;
  durationMs?: number;
  result?: Record<string, unknown>;
}

afterAll(async () => {
  await lab?.close();
  await new Promise((r) => (files ? files.close(r) : r(undefined)));
});

beforeAll(async () => {
  if (missing.length) return;
  dir = scratch('tsbm-deploy-vm-');
  lab = await startLab({ nodes: 2, dir: join(dir, 'lab'), machines: 'qemu', powerDelayMs: 200, diskGiB: 2 });
  const controllerPub = readFileSync(join(lab.dir, 'controller_ed25519.pub'), 'utf8');
  const ramdisk = await buildTestRamdisk(dir, controllerPub);
  image = buildInstanceImage(dir);
  writeFileSync(join(dir, 'no-boot.iso'), buildIso([{ path: 'README.txt', data: Buffer.from('no El Torito entry: firmware cannot boot this\n') }], { volumeId: 'NOBOOT', date: new Date(0) }));
  // The test's file server on loopback: the BMCs fetch the ISOs from it, the ramdisks the image
  // (as http://10.0.2.2:PORT, QEMU's user-mode address for this machine's loopback).
  const served: Record<string, string> = { '/ramdisk.iso': ramdisk.iso, '/instance.raw': image.file, '/no-boot.iso': join(dir, 'no-boot.iso') };
  files = createServer((req, res) => {
    const f = served[req.url ?? ''];
    if (!f) return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Length': statSync(f).size, 'Content-Type': 'application/octet-stream' });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(f).pipe(res);
  });
  await new Promise<void>((r) => files!.listen(0, '127.0.0.1', () => r()));
  filesPort = (files.address() as AddressInfo).port;
  // The lab's inventory, with the test's ramdisk (its host key pinned), image and config drive.
  const inv = parse(readFileSync(lab.inventory, 'utf8')) as { all: { vars: Record<string, unknown>; children: { sim: { hosts: Record<string, Record<string, unknown>> } } } };
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, lab.vms.map((v) => `[127.0.0.1]:${v.cfg.sshPort} ${ramdisk.hostKeyPub}\n`).join(''));
  const vars = inv.all.vars;
  delete vars.installer_iso;
  delete vars.registry_endpoints;
  Object.assign(vars, {
    ssh_known_hosts_file: knownHosts,
    ramdisk_iso: `http://127.0.0.1:${filesPort}/ramdisk.iso`,
    image_url_endpoints: { [`10.0.2.2:${filesPort}`]: `http://127.0.0.1:${filesPort}` },
    // TCG on a shared 2-core machine: firmware plus kernel take tens of seconds, not minutes.
    agent_timeout: 420,
    instance_info: {
      image_source: `http://10.0.2.2:${filesPort}/instance.raw`,
      image_os_hash_algo: 'sha256',
      image_os_hash_value: image.sha256,
      image_disk_format: 'raw',
      root_device: { name: '/dev/vda' },
      configdrive: { meta_data: { tsbm_test: 'vm e2e', node: '{{ inventory_hostname }}' } },
    },
  });
  writeFileSync(join(dir, 'inventory.yml'), stringify(inv));
}, 600_000);

function tsbm(args: string[], timeoutMs: number) {
  return runCli([join(ROOT, 'bin/tsbm.js'), ...args, '-i', join(dir, 'inventory.yml'), '--state', `files:${join(dir, 'state')}`, '--output', 'json'], timeoutMs);
}

function eventsOf(stdout: string): Event[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Event);
}

/** Per host, how long wait_agent waited for SSH after the power-on (its waited_s). */
function waitedSeconds(events: Event[]): Record<string, number> {
  const ids = new Set(events.filter((e) => e.type === 'task_start' && e.module === 'wait_agent').map((e) => e.taskId));
  const out: Record<string, number> = {};
  for (const e of events) {
    const w = e.result?.waited_s;
    if (e.type === 'host_result' && ids.has(e.taskId) && e.host && typeof w === 'number') out[e.host] = Math.max(out[e.host] ?? 0, w);
  }
  return out;
}

/** Per host, how long the named module's tasks took (seconds). */
function moduleSeconds(events: Event[], module: string): Record<string, number> {
  const ids = new Set(events.filter((e) => e.type === 'task_start' && e.module === module).map((e) => e.taskId));
  const out: Record<string, number> = {};
  for (const e of events) if (e.type === 'host_result' && ids.has(e.taskId) && e.host) out[e.host] = Math.round((e.durationMs ?? 0) / 100) / 10;
  return out;
}

/** `len` bytes of a (large, sparse) file at `offset`. */
function readAt(file: string, offset: number, len: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(len);
    readSync(fd, b, 0, len, offset);
    return b;
  } finally {
    closeSync(fd);
  }
}

async function reportOn(consoleFile: string, limitMs: number): Promise<Record<string, unknown> | undefined> {
  const until = Date.now() + limitMs;
  for (;;) {
    const r = instanceReport(readFileSync(consoleFile, 'latin1'));
    if (r || Date.now() > until) return r;
    await new Promise((res) => setTimeout(res, 1000));
  }
}

const show = (r: { status: number | null; stdout: string; stderr: string }) =>
  `exit ${r.status}\n${eventsOf(r.stdout)
    .filter((e) => e.status === 'failed' || e.type === 'validation_error')
    .map((e) => `${e.host}: ${e.task}: ${e.msg}`)
    .join('\n')}\n${r.stderr.slice(-3000)}`;

describe.skipIf(missing.length > 0)(`deploys on UEFI virtual machines (QEMU, OVMF) behind the fake BMC${reason}`, { timeout: 900_000 }, () => {
  it('deploy-image.yml: two VMs at once boot the ramdisk from the CD, get the image and config drive, boot from their disks and report their meta_data', async () => {
    const started = Date.now();
    const r = await tsbm(['run', join(ROOT, 'playbooks/deploy-image.yml')], 800_000);
    expect(r.status, show(r)).toBe(0);
    const ranS = (Date.now() - started) / 1000;
    const events = eventsOf(r.stdout);
    const booted = waitedSeconds(events);
    const wrote = moduleSeconds(events, 'image_write');
    const fromDisk: Record<string, number> = {};
    const t0 = Date.now();
    const reports = await Promise.all(
      lab!.vms.map(async (vm) => {
        const report = await reportOn(vm.consoleFile, 300_000);
        fromDisk[vm.cfg.name] = Math.round((Date.now() - t0) / 100) / 10;
        return report;
      }),
    );
    for (const [i, vm] of lab!.vms.entries()) {
      const report = reports[i];
      expect(report, `no instance report on ${vm.consoleFile}:\n${readFileSync(vm.consoleFile, 'latin1').slice(-2000)}`).toBeDefined();
      expect(report).toMatchObject({ tsbm_test: 'vm e2e', node: vm.cfg.name });
    }
    console.log(`deploy-vm timings (s): run ${ranS.toFixed(1)}; boot to SSH ${JSON.stringify(booted)}; image write ${JSON.stringify(wrote)}; run end to instance report ${JSON.stringify(fromDisk)}`);
    for (const vm of lab!.vms) {
      // The ESP is the image's, byte for byte (the GPT around it changed: backup header moved
      // to the disk's end, the config drive's partition added).
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      expect(sha(readAt(vm.diskFile, 1024 * 1024, 16 * 1024 * 1024))).toBe(sha(readAt(image.file, 1024 * 1024, 16 * 1024 * 1024)));
    }
    // The firmware booted the disk: the console shows GRUB starting the image's kernel from gpt1.
    for (const vm of lab!.vms) expect(readFileSync(vm.consoleFile, 'latin1')).toMatch(/TSBM-TEST-INSTANCE booted from BOOT_IMAGE=\(hd0,gpt1\)\/vmlinuz/);
  });

  it('undeploy.yml erases both disks through the ramdisk and leaves the VMs off with no media', async () => {
    const r = await tsbm(['run', join(ROOT, 'playbooks/undeploy.yml')], 800_000);
    expect(r.status, show(r)).toBe(0);
    for (const vm of lab!.vms) {
      // Neither GPT header is left (the primary at LBA 1, the backup at the last LBA).
      const size = statSync(vm.diskFile).size;
      expect(readAt(vm.diskFile, 512, 8).toString('latin1')).not.toBe('EFI PART');
      expect(readAt(vm.diskFile, size - 512, 8).toString('latin1')).not.toBe('EFI PART');
      const row = await vm.status();
      expect(row.power).toBe('Off');
      expect(row.media).toBe('');
      expect(vm.vm.running).toBe(false);
    }
  });

  it('a medium the firmware cannot boot: wait_agent fails with the last lines of the node\'s serial console', async () => {
    const inv = join(dir, 'inventory.yml');
    const text = readFileSync(inv, 'utf8').replace('/ramdisk.iso', '/no-boot.iso').replace(/agent_timeout: \d+/, 'agent_timeout: 90');
    writeFileSync(inv, text);
    const r = await tsbm(['run', join(ROOT, 'playbooks/deploy-image.yml'), '--limit', 'node01'], 600_000);
    expect(r.status).toBe(2);
    const failed = eventsOf(r.stdout).find((e) => e.type === 'host_result' && e.status === 'failed' && e.host === 'node01');
    expect(failed?.msg, show(r)).toMatch(/did not accept SSH within 90s/);
    expect(failed?.msg).toContain(`the node's console (${lab!.vms[0]!.consoleFile}) ends with:`);
    // What OVMF said about the CD it could not boot.
    expect(failed?.msg).toMatch(/BdsDxe|UEFI QEMU DVD-ROM|Shell>|PXE/);
  });
});
