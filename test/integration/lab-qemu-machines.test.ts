// `--machines qemu`: the lab's nodes are QEMU virtual machines with OVMF firmware behind the fake
// BMC. Driven only through Redfish (power, virtual media, boot override), checked through the
// VM's own QMP socket: the process runs exactly while the BMC says On, the CD drive holds the
// medium the BMC inserted (a file: URL in place, an http: one downloaded), the firmware's boot
// order follows the override (a Once consumed by the boot it applied to), SMBIOS carries the
// BMC's UUID, and the console file says what each power-on did. Nothing needs to boot, so no
// root and no kernel: only qemu-system-x86 and ovmf.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { SIM_ISO_PATH } from '../../packages/lab/src/lab/registry-server.js';
import { findOvmf } from '../../packages/lab/src/vm/qemu-argv.js';
import type { VmNode } from '../../packages/lab/src/vm/vm-node.js';
import { buildIso } from '../../src/configdrive/iso9660.js';
import { findProgram } from '../../src/util/find-program.js';
import { scratchDirs } from '../helpers/scratch.js';

const missing = [!findProgram('qemu-system-x86_64') && 'qemu-system-x86_64 (qemu-system-x86)', !findOvmf() && 'OVMF (ovmf)'].filter(Boolean);
const reason = missing.length ? ` (skipped: needs ${missing.join(', ')})` : '';
const scratch = scratchDirs();

let lab: Lab | undefined;
let vm: VmNode;
let ca: string;
let password: string;
let isoFile: string;

afterAll(async () => {
  await lab?.close();
});

beforeAll(async () => {
  if (missing.length) return;
  const dir = scratch('tsbm-lab-qemu-');
  lab = await startLab({ nodes: 1, dir, machines: 'qemu', powerDelayMs: 0, diskGiB: 1, memoryMiB: 256 });
  vm = lab.vms[0]!;
  ca = readFileSync(join(lab.dir, 'bmc-ca.pem'), 'utf8');
  password = (/redfish_password: (\S+)/.exec(readFileSync(lab.inventory, 'utf8')) ?? [])[1]!;
  isoFile = join(dir, 'first.iso');
  writeFileSync(isoFile, buildIso([{ path: 'hello.txt', data: Buffer.from('first medium\n') }], { volumeId: 'FIRST', date: new Date(0) }));
}, 120_000);

function redfish(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const auth = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
    const req = request(`https://127.0.0.1:${vm.cfg.bmcPort}${path}`, { method, ca, agent: false, headers: { Authorization: auth, ...(payload ? { 'Content-Type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const SYSTEM = '/redfish/v1/Systems/1';
const CD = '/redfish/v1/Managers/1/VirtualMedia/2';

async function act(method: string, path: string, body?: unknown): Promise<void> {
  const r = await redfish(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  await vm.settled();
}

interface BlockInfo {
  qdev?: string;
  inserted?: { file: string; ro: boolean };
}

async function cdDrive(): Promise<BlockInfo | undefined> {
  const blocks = await vm.vm.qmp!.execute<BlockInfo[]>('query-block');
  return blocks.find((b) => b.qdev === 'cd0' || b.qdev?.endsWith('/cd0'));
}

const bootindex = (dev: string) => vm.vm.qmp!.execute<number>('qom-get', { path: `/machine/peripheral/${dev}`, property: 'bootindex' });

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(missing.length > 0)(`lab machines as QEMU VMs behind the fake BMC${reason}`, { timeout: 120_000 }, () => {
  it('power on from the BMC starts the VM with the inserted CD first (Once), its UUID from the BMC', async () => {
    expect(vm.vm.running).toBe(false);
    // Inserted while off: nothing runs yet; the medium goes in at power-on.
    await act('POST', `${CD}/Actions/VirtualMedia.InsertMedia`, { Image: pathToFileURL(isoFile).href });
    expect(vm.vm.running).toBe(false);
    await act('PATCH', SYSTEM, { Boot: { BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Once' } });
    await act('POST', `${SYSTEM}/Actions/ComputerSystem.Reset`, { ResetType: 'On' });
    expect(vm.vm.running).toBe(true);
    expect(((await vm.vm.qmp!.execute<{ status: string }>('query-status')).status)).toBe('running');
    expect((await cdDrive())?.inserted?.file).toBe(isoFile);
    expect((await cdDrive())?.inserted?.ro).toBe(true);
    expect(await bootindex('cd0')).toBe(0);
    expect(await bootindex('disk0')).toBe(1);
    const sys = (await redfish('GET', SYSTEM)).body;
    expect(sys.PowerState).toBe('On');
    expect((await vm.vm.qmp!.execute<{ UUID: string }>('query-uuid')).UUID.toUpperCase()).toBe(String(sys.UUID).toUpperCase());
    // The one-time override was used by this boot.
    expect((sys.Boot as Record<string, unknown>).BootSourceOverrideEnabled).toBe('Disabled');
  });

  it('eject and insert while running change the CD drive through QMP; an http: medium is downloaded as a BMC streams it', async () => {
    await act('POST', `${CD}/Actions/VirtualMedia.EjectMedia`, {});
    expect((await cdDrive())?.inserted).toBeUndefined();
    const url = `${lab!.registry.url}${SIM_ISO_PATH}`;
    await act('POST', `${CD}/Actions/Oem/Hpe/HpeiLOVirtualMedia.InsertVirtualMedia`, { Image: url });
    const file = (await cdDrive())?.inserted?.file;
    expect(file).toBeDefined();
    expect(file!.startsWith(vm.cfg.dir)).toBe(true);
    expect(readFileSync(file!)).toEqual(Buffer.from(await (await fetch(url)).arrayBuffer()));
  });

  it('a restart is a new power-on: a new process, and with the Once consumed the disk comes first', async () => {
    const before = vm.vm.pid!;
    await act('POST', `${SYSTEM}/Actions/ComputerSystem.Reset`, { ResetType: 'ForceRestart' });
    expect(vm.vm.running).toBe(true);
    expect(vm.vm.pid).not.toBe(before);
    expect(alive(before)).toBe(false);
    expect(await bootindex('disk0')).toBe(0);
    expect(await bootindex('cd0')).toBe(1);
    // The medium stays in the drive across the restart, as it does on a BMC.
    expect((await cdDrive())?.inserted?.file).toBeDefined();
    // A persistent override to Pxe puts the network first at the next power-on.
    await act('PATCH', SYSTEM, { Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Continuous' } });
    await act('POST', `${SYSTEM}/Actions/ComputerSystem.Reset`, { ResetType: 'ForceRestart' });
    expect(vm.vm.bootFirst).toBe('pxe');
  });

  it('power off stops the VM; status names the console file, which says what each power-on did', async () => {
    const pid = vm.vm.pid!;
    await act('POST', `${SYSTEM}/Actions/ComputerSystem.Reset`, { ResetType: 'ForceOff' });
    expect(vm.vm.running).toBe(false);
    expect(alive(pid)).toBe(false);
    expect((await redfish('GET', SYSTEM)).body.PowerState).toBe('Off');
    const [row] = await lab!.status();
    expect(row).toMatchObject({ name: 'node01', machine: 'qemu', power: 'Off', phase: 'off', console: vm.consoleFile });
    expect(existsSync(vm.consoleFile)).toBe(true);
    const console = readFileSync(vm.consoleFile, 'utf8');
    expect(console).toMatch(/node01: power on; boot override Cd \(Once\): cd first; CD \//);
    expect(console).toMatch(/node01: power on; boot override Pxe \(Continuous\): pxe first/);
    expect(console).toMatch(/node01: power off/);
    // The inventory points at the node's stable SSH port, whatever the VM's forward is today.
    expect(readFileSync(lab!.inventory, 'utf8')).toContain(`ssh_port: ${vm.cfg.sshPort}`);
  });
});
