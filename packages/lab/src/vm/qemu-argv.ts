// The QEMU command line of one lab machine: q35 with OVMF (UEFI) firmware, a virtio disk that is
// a file, a CD drive whose medium the BMC changes through QMP, user-mode networking whose only
// way in is an SSH forward on 127.0.0.1, the serial console appended to a file. What the firmware
// boots first is decided per power-on, by `bootindex`, from the BMC's boot override.
import { existsSync, readFileSync } from 'node:fs';

/** What the firmware tries first: the BMC's override as the machine starts. */
export type BootFirst = 'cd' | 'disk' | 'pxe';

export interface VmSpec {
  name: string;
  uuid: string;
  /** One virtio NIC per MAC, the first on the user-mode network, the others with no peer. */
  macs: string[];
  memoryMiB: number;
  cpus: number;
  diskFile: string;
  /** OVMF's code (read-only) and this machine's own copy of its variable store. */
  firmwareCode: string;
  firmwareVars: string;
  qmpSocket: string;
  consoleFile: string;
  accel: 'kvm' | 'tcg';
}

/** Where Debian's `ovmf` puts the firmware: the 4 MiB build first. */
export function findOvmf(): { code: string; vars: string } | undefined {
  for (const [code, vars] of [
    ['/usr/share/OVMF/OVMF_CODE_4M.fd', '/usr/share/OVMF/OVMF_VARS_4M.fd'],
    ['/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_VARS.fd'],
  ] as const) {
    if (existsSync(code) && existsSync(vars)) return { code, vars };
  }
  return undefined;
}

/**
 * KVM only where the CPU offers virtualization to this machine: /dev/kvm alone is not enough
 * (nested in a VM without vmx/svm, OVMF stops with "KVM internal error ... emulation failure").
 */
export function usableAccel(): 'kvm' | 'tcg' {
  if (process.env.TSBM_QEMU_ACCEL === 'tcg' || process.env.TSBM_QEMU_ACCEL === 'kvm') return process.env.TSBM_QEMU_ACCEL;
  if (!existsSync('/dev/kvm')) return 'tcg';
  try {
    return /\b(vmx|svm)\b/.test(readFileSync('/proc/cpuinfo', 'utf8')) ? 'kvm' : 'tcg';
  } catch {
    return 'tcg';
  }
}

/** bootindex per device: the one asked first; the others follow as a server's default order would. */
function bootOrder(first: BootFirst): { cd: number; disk: number; net: number } {
  if (first === 'cd') return { cd: 0, disk: 1, net: 2 };
  if (first === 'pxe') return { net: 0, disk: 1, cd: 2 };
  return { disk: 0, cd: 1, net: 2 };
}

export function qemuArgv(s: VmSpec, first: BootFirst): string[] {
  const order = bootOrder(first);
  const argv = [
    '-name', s.name,
    '-machine', `q35,accel=${s.accel}`,
    '-cpu', s.accel === 'kvm' ? 'host' : 'max',
    '-smp', String(s.cpus),
    '-m', String(s.memoryMiB),
    '-uuid', s.uuid,
    '-nodefaults', '-display', 'none', '-monitor', 'none',
    // A guest reboot ends the process: the lab restarts it so the BMC's boot override (a Once
    // consumed, a new target) decides what boots next, as a real server's firmware does.
    '-no-reboot',
    // Paused until the lab has put the BMC's medium in the CD drive and read the SSH forward.
    '-S',
    '-qmp', `unix:${s.qmpSocket},server=on,wait=off`,
    '-chardev', `file,id=console,path=${s.consoleFile},append=on`,
    '-serial', 'chardev:console',
    '-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${s.firmwareCode}`,
    '-drive', `if=pflash,format=raw,unit=1,file=${s.firmwareVars}`,
    '-blockdev', `driver=file,filename=${s.diskFile},node-name=disk0-file`,
    '-blockdev', 'driver=raw,file=disk0-file,node-name=disk0',
    '-device', `virtio-blk-pci,drive=disk0,id=disk0,bootindex=${order.disk}`,
  ];
  // Empty at start: the medium goes in through QMP while the machine is still paused (-S).
  argv.push('-device', `ide-cd,id=cd0,bus=ide.0,bootindex=${order.cd}`);
  // The guest reaches this machine's loopback as 10.0.2.2 (an image URL the controller serves);
  // the only way in is the SSH forward, on 127.0.0.1 at a port the OS picks (read back by QMP).
  argv.push('-netdev', 'user,id=net0,hostfwd=tcp:127.0.0.1:0-:22');
  s.macs.forEach((mac, i) => {
    argv.push('-device', `virtio-net-pci,mac=${mac},${i === 0 ? `netdev=net0,bootindex=${order.net}` : `id=nic${i}`}`);
  });
  return argv;
}

/** The host port of the SSH forward, from `info usernet`. */
export function forwardedPort(usernet: string): number | undefined {
  const m = /HOST_FORWARD\]\s+\d+\s+127\.0\.0\.1\s+(\d+)\s+\S+\s+22\b/.exec(usernet);
  return m ? Number(m[1]) : undefined;
}
