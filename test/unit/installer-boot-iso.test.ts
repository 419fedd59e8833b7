// The installer boot ISO's parts, read back by tsbm's readers and by real tools where the machine
// has them (mtools, fsck.fat, xorriso, isoinfo: .ci/setup.sh installs them): the FAT image of
// the El Torito entry, the El Torito catalog, and the kernel command line in grub.cfg.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bootCatalogSector, efiBootImage, PLATFORM_EFI, readBootCatalog } from '../../src/configdrive/el-torito.js';
import { buildFat } from '../../src/configdrive/fat.js';
import { fatFile, isFat, readFatFiles } from '../../src/configdrive/fat-read.js';
import { buildIso } from '../../src/configdrive/iso9660.js';
import { readIsoFiles } from '../../src/configdrive/iso9660-read.js';
import { buildStandaloneGrub, controllerGrub, EFI_LOADER_PATH, operatorEspFiles } from '../../src/modules/anaconda/efi-loader.js';
import {
  grubLinuxLine,
  INSTALLER_BOOT_LABEL,
  InstallerBootError,
  installerCmdline,
  installerGrubCfg,
  isRemoteStage2,
  planInstallerBoot,
} from '../../src/modules/anaconda/installer-boot.js';
import { buildInstallerBootIso } from '../../src/modules/anaconda/installer-boot-iso.js';

const have = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const run = (argv: string[]) => {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  return { rc: r.status ?? 128, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
};
const dir = mkdtempSync(join(tmpdir(), 'tsbm-bootiso-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const big = Buffer.alloc(300_000);
for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
const FILES = [
  { path: 'EFI/BOOT/grub.cfg', data: Buffer.from('set timeout=0\n') },
  { path: 'EFI/BOOT/BOOTX64.EFI', data: big },
  { path: 'EFI/BOOT/empty', data: Buffer.alloc(0) },
  { path: 'a long name with spaces.conf', data: Buffer.from('long\n') },
  { path: 'README.TXT', data: Buffer.from('short name\n') },
];

describe('FAT image (the El Torito EFI entry)', () => {
  const img = buildFat(FILES, { label: 'tsbm-esp' });
  const file = join(dir, 'esp.img');
  writeFileSync(file, img);

  it('reads back with tsbm’s reader: every file, path and byte; long names kept', () => {
    expect(isFat(img)).toBe(true);
    const back = readFatFiles(img);
    expect(back.map((f) => f.path).sort()).toEqual(FILES.map((f) => f.path).sort());
    for (const f of FILES) expect(fatFile(back, f.path.toLowerCase())?.equals(f.data), f.path).toBe(true);
    // The same input gives the same bytes (fixed dates and serial).
    expect(buildFat(FILES, { label: 'tsbm-esp' }).equals(img)).toBe(true);
  });

  it('refuses what FAT cannot hold: a name twice, a bad label', () => {
    expect(() => buildFat([FILES[0]!, { path: 'efi/boot/GRUB.CFG', data: Buffer.from('x') }], { label: 'X' })).toThrow(/given twice/);
    expect(() => buildFat(FILES, { label: 'way too long label' })).toThrow(/volume label/);
  });

  it.skipIf(!have('fsck.fat'))('fsck.fat -n finds nothing to fix (dosfstools)', () => {
    const r = run(['fsck.fat', '-n', file]);
    expect(r.rc, r.out).toBe(0);
    expect(r.out).toMatch(/: \d+ files, \d+\/\d+ clusters/);
  });

  it.skipIf(!have('mtype') || !have('mdir'))('mtools lists and reads the files (mdir, mtype)', () => {
    const listing = run(['mdir', '-i', file, '-/', '-b', '::']);
    expect(listing.rc, listing.out).toBe(0);
    expect(listing.out).toContain('::/EFI/BOOT/BOOTX64.EFI');
    expect(listing.out).toContain('::/a long name with spaces.conf');
    expect(run(['mtype', '-i', file, '::/EFI/BOOT/grub.cfg']).out).toBe('set timeout=0\n');
    const out = join(dir, 'loader.efi');
    expect(spawnSync('mcopy', ['-i', file, '::/EFI/BOOT/BOOTX64.EFI', out]).status).toBe(0);
    expect(readFileSync(out).equals(big)).toBe(true);
  });
});

describe('El Torito (the ISO’s UEFI boot entry)', () => {
  const esp = buildFat(FILES, { label: 'TSBM-ESP' });
  const iso = buildIso([{ path: 'images/pxeboot/vmlinuz', data: Buffer.from('kernel') }], { volumeId: INSTALLER_BOOT_LABEL, efiBootImage: esp });
  const file = join(dir, 'boot.iso');
  writeFileSync(file, iso);

  it('has a Boot Record, a checksummed catalog with one bootable no-emulation EFI entry, and that entry is the FAT image', () => {
    const at = bootCatalogSector(iso);
    expect(at).toBeGreaterThan(17);
    const entries = readBootCatalog(iso);
    expect(entries).toEqual([{ platform: PLATFORM_EFI, bootable: true, media: 0, sector: expect.any(Number), count: Math.ceil(esp.length / 512) }]);
    expect(efiBootImage(iso)?.equals(esp)).toBe(true);
    // The ISO 9660 tree is still there; an ISO without the option has no catalog.
    expect(readIsoFiles(iso).map((f) => f.path)).toEqual(['images/pxeboot/vmlinuz']);
    expect(bootCatalogSector(buildIso([{ path: 'x', data: Buffer.from('x') }], { volumeId: 'X' }))).toBeUndefined();
  });

  it.skipIf(!have('xorriso'))('xorriso reports the same entry (-report_el_torito plain)', () => {
    const r = run(['xorriso', '-indev', file, '-report_el_torito', 'plain']);
    expect(r.rc, r.out).toBe(0);
    const entry = readBootCatalog(iso)[0]!;
    expect(r.out).toMatch(new RegExp(`El Torito boot img :\\s+1\\s+UEFI\\s+y\\s+none\\s+0x0000\\s+0x00\\s+${entry.count}\\s+${entry.sector}`));
  });

  it.skipIf(!have('isoinfo'))('isoinfo -d finds the catalog and a bootable no-emulation entry', () => {
    const r = run(['isoinfo', '-d', '-i', file]);
    expect(r.out).toContain(`El Torito VD version 1 found, boot catalog is in sector ${bootCatalogSector(iso)}`);
    expect(r.out).toMatch(/Bootid 88 \(bootable\)/);
    expect(r.out).toMatch(/Boot media 0 \(No Emulation Boot\)/);
  });
});

describe('the kernel command line and grub.cfg', () => {
  it('carries inst.stage2=, inst.ks= only for ks_url, then the operator’s arguments', () => {
    const c = installerCmdline({ stage2Url: 'http://10.0.0.5:8080/files/abc/install.img', appendParams: ' console=ttyS0,115200  rd.debug ' });
    expect(c.args).toEqual(['inst.stage2=http://10.0.0.5:8080/files/abc/install.img', 'console=ttyS0,115200', 'rd.debug']);
    const ks = installerCmdline({ stage2Url: 'https://mirror/f41/os/', ksUrl: 'http://10.0.0.5:8080/ks/node1.cfg' });
    expect(ks.args).toEqual(['inst.stage2=https://mirror/f41/os/', 'inst.ks=http://10.0.0.5:8080/ks/node1.cfg']);
    const cfg = installerGrubCfg(ks);
    expect(cfg).toContain(`search --no-floppy --set=root --label ${INSTALLER_BOOT_LABEL}\n`);
    expect(cfg).toContain('  linux /images/pxeboot/vmlinuz inst.stage2=https://mirror/f41/os/ inst.ks=http://10.0.0.5:8080/ks/node1.cfg\n');
    expect(cfg).toContain('  initrd /images/pxeboot/initrd.img\n');
    expect(grubLinuxLine(cfg)).toEqual({ kernel: '/images/pxeboot/vmlinuz', initrd: '/images/pxeboot/initrd.img', args: ks.args });
  });

  it('quotes what GRUB would read as script and refuses what it cannot pass as one argument', () => {
    const c = installerCmdline({ stage2Url: 'http://h/tree/?a=1&b=2;x', appendParams: 'ip=dhcp' });
    expect(c.grubArgs[0]).toBe("'inst.stage2=http://h/tree/?a=1&b=2;x'");
    expect(grubLinuxLine(installerGrubCfg(c))?.args).toEqual(c.args);
    expect(() => installerCmdline({ stage2Url: "http://h/it's" })).toThrow(InstallerBootError);
    expect(() => installerCmdline({ stage2Url: 'http://h/', appendParams: 'a="b c"' })).toThrow(/cannot pass as one kernel argument/);
    expect(() => installerCmdline({ stage2Url: 'http://h/', appendParams: 'inst.ks=http://other/' })).toThrow(/sets inst\.ks, which tsbm sets itself/);
    expect(() => installerCmdline({ stage2Url: `http://h/${'x'.repeat(2100)}` })).toThrow(/more than the kernel takes/);
  });

  it('chooses the form: the ISO, or all three files; both, part, or neither is an error naming what to set', () => {
    const base = { iso: undefined, isoName: 'installer_iso', kernel: undefined, ramdisk: undefined, stage2: undefined, appendParams: undefined };
    expect(planInstallerBoot({ ...base, iso: 'http://x/boot.iso' })).toEqual({ kind: 'iso', iso: 'http://x/boot.iso', from: 'installer_iso' });
    expect(planInstallerBoot({ ...base, kernel: 'k', ramdisk: 'r', stage2: 's', appendParams: 'console=ttyS0' })).toEqual({ kind: 'files', kernel: 'k', ramdisk: 'r', stage2: 's', appendParams: 'console=ttyS0' });
    expect(() => planInstallerBoot({ ...base, iso: 'i', kernel: 'k' })).toThrow(/installer_iso and instance_info\.kernel are both set/);
    expect(() => planInstallerBoot({ ...base, kernel: 'k', ramdisk: 'r' })).toThrow(/instance_info\.kernel and instance_info\.ramdisk are set but not instance_info\.stage2/);
    expect(() => planInstallerBoot(base)).toThrow(/no installer_iso, and no instance_info\.kernel, ramdisk and stage2/);
    expect(() => planInstallerBoot({ ...base, kernel: 7, ramdisk: 'r', stage2: 's' })).toThrow(/instance_info\.kernel must be a non-empty string/);
    expect(isRemoteStage2('nfs:server:/tree')).toBe(true);
    expect(isRemoteStage2('/srv/f41/images/install.img')).toBe(false);
  });
});

describe('the EFI loader', () => {
  it('takes an operator’s ESP image’s files (its grub.cfg replaced by tsbm’s), or a bare EFI binary; refuses anything else', () => {
    const esp = buildFat(
      [
        { path: 'EFI/BOOT/BOOTX64.EFI', data: Buffer.from('MZshim') },
        { path: 'EFI/BOOT/grubx64.efi', data: Buffer.from('MZgrub') },
        { path: 'EFI/BOOT/grub.cfg', data: Buffer.from('the distribution’s') },
      ],
      { label: 'ANACONDA' },
    );
    expect(operatorEspFiles(esp, 'efiboot.img').map((f) => f.path)).toEqual(['EFI/BOOT/BOOTX64.EFI', 'EFI/BOOT/grubx64.efi']);
    expect(operatorEspFiles(Buffer.from('MZ\x90\x00'), 'x.efi')).toEqual([{ path: EFI_LOADER_PATH, data: Buffer.from('MZ\x90\x00') }]);
    expect(() => operatorEspFiles(buildFat([{ path: 'EFI/other.efi', data: Buffer.from('MZ') }], { label: 'X' }), 'e.img')).toThrow(/has no EFI\/BOOT\/BOOTX64\.EFI/);
    expect(() => operatorEspFiles(Buffer.alloc(4096), 'junk.img')).toThrow(/neither a FAT12\/16 ESP image nor an EFI binary/);
  });

  it.skipIf(!have('mkfs.fat') || !have('mcopy'))('reads an ESP image made by the real tools (mkfs.fat -F 12 and -F 16, mmd, mcopy), as Ironic’s documentation makes one', () => {
    for (const bits of ['12', '16']) {
      const img = join(dir, `made-${bits}.img`);
      writeFileSync(img, Buffer.alloc(bits === '12' ? 4 * 1024 * 1024 : 24 * 1024 * 1024));
      expect(run(['mkfs.fat', '-F', bits, '-n', 'ESP_IMAGE', img]).rc).toBe(0);
      expect(run(['mmd', '-i', img, '::EFI', '::EFI/BOOT']).rc).toBe(0);
      const shim = join(dir, 'shim.efi');
      writeFileSync(shim, Buffer.concat([Buffer.from('MZ'), big]));
      const grubEfi = join(dir, 'grubx64.efi');
      writeFileSync(grubEfi, Buffer.from('MZ grub'));
      expect(run(['mcopy', '-i', img, shim, '::EFI/BOOT/BOOTX64.EFI']).rc).toBe(0);
      expect(run(['mcopy', '-i', img, grubEfi, '::EFI/BOOT/grubx64.efi']).rc).toBe(0);
      const files = operatorEspFiles(readFileSync(img), img);
      expect(files.map((f) => f.path).sort(), bits).toEqual(['EFI/BOOT/BOOTX64.EFI', 'EFI/BOOT/grubx64.efi']);
      expect(files.find((f) => f.path === 'EFI/BOOT/BOOTX64.EFI')?.data.equals(Buffer.concat([Buffer.from('MZ'), big])), bits).toBe(true);
    }
  });

  it('the whole ISO: grub.cfg in the FAT image and the ISO tree, kernel and initrd where grub.cfg says', () => {
    const c = installerCmdline({ stage2Url: 'http://h/os/' });
    const iso = buildInstallerBootIso({ kernel: Buffer.from('K'), initrd: Buffer.from('I'), esp: [{ path: EFI_LOADER_PATH, data: Buffer.from('MZ') }], grubCfg: installerGrubCfg(c) });
    const fat = readFatFiles(efiBootImage(iso)!);
    const tree = readIsoFiles(iso);
    const cfg = fatFile(fat, 'EFI/BOOT/grub.cfg')!.toString();
    expect(tree.find((f) => f.path === 'EFI/BOOT/grub.cfg')?.data.toString()).toBe(cfg);
    const line = grubLinuxLine(cfg)!;
    expect(tree.find((f) => `/${f.path}` === line.kernel)?.data.toString()).toBe('K');
    expect(tree.find((f) => `/${f.path}` === line.initrd)?.data.toString()).toBe('I');
    expect(line.args).toEqual(['inst.stage2=http://h/os/']);
  });

  it('a controller without grub-mkstandalone is told what to install, or to give driver_info.bootloader', async () => {
    const saved = process.env.PATH;
    process.env.PATH = join(dir, 'no-such-bin');
    try {
      const g = controllerGrub();
      expect(g).toEqual({ missing: expect.stringMatching(/^grub-mkstandalone is not on the controller; tsbm needs an EFI loader/) });
      const e = await buildStandaloneGrub().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(InstallerBootError);
      expect((e as InstallerBootError).hint).toMatch(/apt-get install grub-efi-amd64-bin.*driver_info\.bootloader/);
    } finally {
      process.env.PATH = saved;
    }
  });

  const grub = controllerGrub();
  it.skipIf('missing' in grub)('grub-mkstandalone builds an EFI binary (PE, "MZ") on this controller', { timeout: 60_000 }, async () => {
    const bin = await buildStandaloneGrub();
    expect(bin.toString('latin1', 0, 2)).toBe('MZ');
    expect(bin.length).toBeLessThan(16 * 1024 * 1024);
  });
});
