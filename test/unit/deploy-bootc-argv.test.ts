import { describe, expect, it } from 'vitest';
import {
  authorizedKeysText,
  bootcInstallArgv,
  isNotBootcImage,
  selinuxActive,
  sfdiskPartitions,
} from '../../src/modules/bootc/bootc-argv.js';

const base = {
  ref: 'reg/img:1',
  device: '/dev/vda',
  diskMiB: 8192,
  selinux: false,
  tpm2Luks: false,
  extraArgs: [],
};

describe('bootc install argv', () => {
  it("is IPA's command with --disable-selinux when SELinux is off", () => {
    expect(bootcInstallArgv(base)).toEqual([
      'podman',
      'run',
      '--rm',
      '--privileged',
      '--pid=host',
      '--pull=never',
      '-v',
      '/var/lib/containers:/var/lib/containers',
      '-v',
      '/dev:/dev',
      'reg/img:1',
      'bootc',
      'install',
      'to-disk',
      '--wipe',
      '--skip-fetch-check',
      '--root-size=7424M',
      '--disable-selinux',
      '/dev/vda',
    ]);
  });
  it('SELinux on: label option, no --disable-selinux', () => {
    const a = bootcInstallArgv({ ...base, selinux: true });
    expect(a.slice(10, 12)).toEqual(['--security-opt', 'label=type:unconfined_t']);
    expect(a).not.toContain('--disable-selinux');
  });
  it('tpm2, keys, extra args; device stays last', () => {
    const a = bootcInstallArgv({
      ...base,
      tpm2Luks: true,
      authorizedKeysFile: '/tmp/k',
      extraArgs: ['--karg=console=ttyS0'],
    });
    expect(a).toContain('--block-setup=tpm2-luks');
    expect(a).toContain('--root-ssh-authorized-keys=/tmp/k');
    expect(a.join(' ')).toContain('-v /tmp:/tmp reg/img:1');
    expect(a.slice(-2)).toEqual(['--karg=console=ttyS0', '/dev/vda']);
  });
  it('refuses a positional extra arg and a too-small disk', () => {
    expect(() => bootcInstallArgv({ ...base, extraArgs: ['/dev/sda'] })).toThrow(/not an option/);
    expect(() => bootcInstallArgv({ ...base, diskMiB: 700 })).toThrow(/too small/);
  });
  it('getenforce', () => {
    expect(selinuxActive(0, 'Enforcing\n')).toBe(true);
    expect(selinuxActive(0, 'Permissive')).toBe(true);
    expect(selinuxActive(0, 'Disabled')).toBe(false);
    expect(selinuxActive(127, '')).toBe(false);
  });
  it('keys, error detection, sfdisk', () => {
    expect(authorizedKeysText(['ssh-ed25519 A', ' ', 'ssh-rsa B'])).toBe('ssh-ed25519 A\nssh-rsa B\n');
    expect(authorizedKeysText('')).toBeUndefined();
    expect(
      isNotBootcImage('Error: crun: executable file `bootc` not found in $PATH: No such file or directory'),
    ).toBe(true);
    expect(isNotBootcImage('error: installing: disk too small')).toBe(false);
    expect(
      sfdiskPartitions(JSON.stringify({ partitiontable: { label: 'gpt', partitions: [{}, {}] } })),
    ).toEqual({ label: 'gpt', count: 2 });
    expect(sfdiskPartitions('')).toBeUndefined();
  });
});
