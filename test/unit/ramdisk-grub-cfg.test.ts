// The deploy ramdisk's grub.cfg carries `tsbm ramdisk build --append` words: each must stay one
// kernel argument, as the installer boot ISO's do (one GRUB writer, src/util/grub-cfg.ts).
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { installerGrubCfg } from '../../src/modules/anaconda/installer-boot.js';
import { grubCfg, kernelArgs } from '../../src/ramdisk/build.js';
import { thrownBy } from '../helpers/thrown.js';

describe('the ramdisk grub.cfg', () => {
  it('boots the kernel with the consoles and --append, a word each', () => {
    const cfg = grubCfg(kernelArgs('ipv6.disable=1 tsbm.note=a;b'));
    expect(cfg).toContain("  linux /live/vmlinuz console=tty0 console=ttyS0,115200n8 ipv6.disable=1 'tsbm.note=a;b'\n");
    expect(cfg.split('\n').filter((l) => l.trim().startsWith('linux'))).toHaveLength(1);
  });

  it('refuses an --append word that would end the line or carry a quote, as an options error', () => {
    for (const bad of [`x'y`, 'a\\b', 'a\u0001b']) {
      const e = thrownBy(() => kernelArgs(bad));
      expect(e, bad).toBeInstanceOf(TsbmError);
      expect((e as TsbmError).kind, bad).toBe('options');
      expect((e as TsbmError).message).toMatch(/^--append: .* cannot be one kernel argument$/);
    }
  });

  it('the installer boot ISO uses the same writer', () => {
    expect(installerGrubCfg({ args: ['inst.stage2=http://x/'], grubArgs: ['inst.stage2=http://x/'] })).toBe(
      [
        '# Written by tsbm: boots the installer kernel and ramdisk from this ISO.',
        'set timeout=0',
        'set default=0',
        'search --no-floppy --set=root --label TSBM-INSTALLER',
        "menuentry 'Install (tsbm)' {",
        '  linux /images/pxeboot/vmlinuz inst.stage2=http://x/',
        '  initrd /images/pxeboot/initrd.img',
        '}',
        '',
      ].join('\n'),
    );
  });
});
