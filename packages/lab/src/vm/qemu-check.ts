// What a lab of VMs needs from this machine, checked before anything starts: QEMU for x86_64 and
// OVMF (UEFI firmware), and enough memory for the VMs asked for.
import { TsbmError } from 'tsbm/lib/errors.js';
import { findProgram } from 'tsbm/lib/util/find-program.js';
import { findOvmf, usableAccel } from './qemu-argv.js';

/** Each VM is a QEMU process using about 450 MiB (768 MiB guest, measured under TCG): a lab of VMs stays small. */
export const MAX_VMS = 32;

export function checkQemu(nodes: number): { firmware: { code: string; vars: string }; accel: 'kvm' | 'tcg' } {
  const missing = [
    !findProgram('qemu-system-x86_64', ['/usr/bin', '/usr/local/bin']) && 'qemu-system-x86_64 (Debian: qemu-system-x86)',
    !findOvmf() && 'OVMF firmware (Debian: ovmf)',
  ].filter((m): m is string => typeof m === 'string');
  if (missing.length) {
    throw new TsbmError('options', `--machines qemu needs ${missing.join(' and ')}`, { hint: 'apt-get install qemu-system-x86 ovmf' });
  }
  if (nodes > MAX_VMS) throw new TsbmError('options', `--machines qemu runs at most ${MAX_VMS} VMs, got --nodes ${nodes}`, { hint: 'each VM is a QEMU process with its own memory; simulated nodes (--machines sim) scale to thousands' });
  return { firmware: findOvmf()!, accel: usableAccel() };
}
