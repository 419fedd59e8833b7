// The installer boot ISO tsbm builds from a kernel and ramdisk, booted for real: qemu with OVMF
// (UEFI firmware) boots it from a virtual CD through its El Torito UEFI entry, the controller's
// GRUB (grub-mkstandalone) reads EFI/BOOT/grub.cfg and starts this machine's kernel with a tiny
// busybox initrd, which prints /proc/cmdline on the serial console and powers off. The
// command line must carry inst.stage2= as tsbm wrote it. qemu is bounded (120 s) and killed in
// every path.
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildStandaloneGrub, controllerGrub, type EspFile, operatorEspFiles } from '../../src/modules/anaconda/efi-loader.js';
import { installerCmdline, installerGrubCfg } from '../../src/modules/anaconda/installer-boot.js';
import { buildInstallerBootIso } from '../../src/modules/anaconda/installer-boot-iso.js';
import { busyboxInitramfs } from './lab/initramfs.js';
import { haveTool, isRoot, sh } from './lab/run.js';

const QEMU_BOUND_MS = 120_000;
const OVMF_CODE = ['/usr/share/OVMF/OVMF_CODE_4M.fd', '/usr/share/OVMF/OVMF_CODE.fd'].find(existsSync);
const OVMF_VARS = ['/usr/share/OVMF/OVMF_VARS_4M.fd', '/usr/share/OVMF/OVMF_VARS.fd'].find(existsSync);
const kernel = existsSync('/boot') ? readdirSync('/boot').filter((f) => /^vmlinuz-/.test(f)).sort().map((f) => join('/boot', f)).at(-1) : undefined;
const busybox = ['/bin/busybox', '/usr/bin/busybox'].find((b) => existsSync(b));

const missing = [
  !isRoot && 'root',
  !haveTool('qemu-system-x86_64') && 'qemu-system-x86_64 (qemu-system-x86)',
  !OVMF_CODE && 'OVMF (ovmf)',
  !kernel && 'a kernel at /boot/vmlinuz-* (linux-image-cloud-amd64)',
  !busybox && 'busybox',
  'missing' in controllerGrub() && 'grub-mkstandalone (grub-efi-amd64-bin)',
].filter(Boolean);
if (missing.length) console.warn(`installer-boot-qemu e2e skipped: needs ${missing.join(', ')}`);

let qemu: ChildProcess | undefined;
const scratch: string[] = [];
function kill(p: ChildProcess | undefined): void {
  try {
    if (p?.pid && p.exitCode === null && p.signalCode === null) process.kill(-p.pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

afterAll(() => {
  kill(qemu);
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/** Runs qemu until it exits or the bound passes (then kills it); its serial console. */
function boot(iso: string, vars: string): Promise<{ console: string; timedOut: boolean; code: number | null }> {
  // TCG unless asked: KVM nested in a VM (this machine's) stops OVMF with "emulation failure".
  const kvm = process.env.TSBM_QEMU_KVM === '1' && existsSync('/dev/kvm');
  const argv = [
    '-machine', `q35,accel=${kvm ? 'kvm' : 'tcg'}`,
    '-m', '512',
    '-nographic', '-monitor', 'none', '-serial', 'stdio', '-no-reboot',
    '-net', 'none',
    '-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${OVMF_CODE}`,
    '-drive', `if=pflash,format=raw,unit=1,file=${vars}`,
    '-drive', `file=${iso},media=cdrom,readonly=on,format=raw`,
  ];
  return new Promise((resolve) => {
    let out = '';
    let timedOut = false;
    qemu = spawn('qemu-system-x86_64', argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const p = qemu;
    const timer = setTimeout(() => {
      timedOut = true;
      kill(p);
    }, QEMU_BOUND_MS);
    p.stdout?.on('data', (c: Buffer) => {
      out += c.toString('latin1');
      // A dead end (KVM failing, GRUB's prompt, the firmware's shell: nothing booted) ends the boot at once rather than at the bound.
      if (/emulation failure|grub> |Shell> /.test(out)) kill(p);
      // Once the line is out, nothing more is needed from the guest.
      if (/TSBM-CMDLINE-END/.test(out)) setTimeout(() => kill(p), 2000);
    });
    p.stderr?.on('data', (c: Buffer) => (out += c.toString('latin1')));
    p.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ console: out, timedOut, code });
    });
  });
}

const INIT = '/bin/busybox mount -t proc proc /proc\necho "TSBM-CMDLINE-BEGIN $(/bin/busybox cat /proc/cmdline) TSBM-CMDLINE-END"\n/bin/busybox poweroff -f\n';

/** Builds the ISO with these EFI loader files, boots it, and returns the kernel's arguments. */
async function bootedArgs(esp: EspFile[], cmdline: ReturnType<typeof installerCmdline>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tsbm-bootiso-'));
  scratch.push(dir);
  const vars = join(dir, 'vars.fd');
  copyFileSync(OVMF_VARS!, vars);
  const iso = buildInstallerBootIso({ kernel: readFileSync(kernel!), initrd: busyboxInitramfs(busybox!, INIT), esp, grubCfg: installerGrubCfg(cmdline) });
  const isoFile = join(dir, 'boot.iso');
  writeFileSync(isoFile, iso);
  const r = await boot(isoFile, vars);
  const line = /TSBM-CMDLINE-BEGIN (.*) TSBM-CMDLINE-END/.exec(r.console)?.[1];
  expect(line, `no command line on the serial console (timed out: ${r.timedOut}); console tail:\n${r.console.slice(-3000)}`).toBeDefined();
  expect(r.timedOut).toBe(false);
  return line!.trim().split(/\s+/);
}

describe.skipIf(missing.length > 0)('the installer boot ISO boots under UEFI (qemu, OVMF)', { timeout: 2 * QEMU_BOUND_MS + 60_000 }, () => {
  const stage2 = 'http://192.0.2.10:8080/files/0123abcd/install.img';

  it('with the controller GRUB: OVMF boots the El Torito entry, GRUB reads grub.cfg, the kernel gets inst.stage2=', async () => {
    const cmdline = installerCmdline({ stage2Url: stage2, appendParams: 'console=ttyS0,115200 panic=-1' });
    const args = await bootedArgs([{ path: 'EFI/BOOT/BOOTX64.EFI', data: await buildStandaloneGrub() }], cmdline);
    expect(args).toContain(`inst.stage2=${stage2}`);
    expect(args).toContain('console=ttyS0,115200');
    expect(args.some((a) => a.startsWith('inst.ks='))).toBe(false);
  });

  it.skipIf(!haveTool('mkfs.fat') || !haveTool('mcopy'))('with an operator ESP image (driver_info.bootloader) made by mkfs.fat and mcopy: its loader boots, with inst.ks= for ks_url', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsbm-esp-'));
    scratch.push(dir);
    const img = join(dir, 'efiboot.img');
    const loader = join(dir, 'loader.efi');
    writeFileSync(img, Buffer.alloc(16 * 1024 * 1024));
    writeFileSync(loader, await buildStandaloneGrub());
    sh(['mkfs.fat', '-F', '16', '-n', 'ANACONDA', img]);
    sh(['mmd', '-i', img, '::EFI', '::EFI/BOOT']);
    sh(['mcopy', '-i', img, loader, '::EFI/BOOT/BOOTX64.EFI']);
    const ks = 'http://192.0.2.10:8080/ks/node01.cfg';
    const args = await bootedArgs(operatorEspFiles(readFileSync(img), img), installerCmdline({ stage2Url: stage2, ksUrl: ks, appendParams: 'console=ttyS0,115200 panic=-1' }));
    // GRUB puts BOOT_IMAGE= first; tsbm's arguments follow in order.
    expect(args.filter((a) => a.startsWith('inst.'))).toEqual([`inst.stage2=${stage2}`, `inst.ks=${ks}`]);
  });
});
