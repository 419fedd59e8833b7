import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FACTS_SCRIPT, parseFacts } from '../../src/modules/facts/facts-script.js';

const sample = [
  '',
  '@@tsbm:hostname',
  'rd1',
  '@@tsbm:uname',
  'Linux 6.1.0-18-amd64 x86_64',
  '@@tsbm:os',
  'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian',
  '@@tsbm:meminfo',
  'MemTotal:        8000000 kB\nMemAvailable:    4000000 kB\nSwapTotal:             0 kB',
  '@@tsbm:nproc',
  '4',
  '@@tsbm:cpumodel',
  'model name\t: QEMU Virtual CPU',
  '@@tsbm:lsblk',
  JSON.stringify({ blockdevices: [{ name: 'vda', size: 10737418240, type: 'disk' }] }),
  '@@tsbm:ip',
  JSON.stringify([
    { ifname: 'lo', address: '00:00:00:00:00:00', link_type: 'loopback', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8 }] },
    { ifname: 'eth0', address: '52:54:00:AA:BB:CC', operstate: 'UP', mtu: 1500, link_type: 'ether', addr_info: [{ family: 'inet', local: '10.0.0.2', prefixlen: 24 }] },
  ]),
  '@@tsbm:uuid',
  '4C4C4544-0000-1111-2222-333344445555',
  '@@tsbm:selinux',
  'Enforcing',
  '@@tsbm:podman',
  'podman version 4.9.4',
  '@@tsbm:end',
  '',
].join('\n');

describe('facts parsing', () => {
  it('turns the tagged sections into typed facts', () => {
    const f = parseFacts(sample);
    expect(f).toMatchObject({
      hostname: 'rd1',
      kernel: '6.1.0-18-amd64',
      architecture: 'x86_64',
      os: { id: 'debian', version_id: '12' },
      memory: { total_mb: 7812, available_mb: 3906, swap_total_mb: 0 },
      processor_count: 4,
      processor_model: 'QEMU Virtual CPU',
      disks: [{ name: 'vda', size: 10737418240 }],
      macs: ['52:54:00:aa:bb:cc'],
      system_uuid: '4c4c4544-0000-1111-2222-333344445555',
      selinux: { status: 'enabled', mode: 'enforcing' },
      podman_version: '4.9.4',
    });
    expect(f.interfaces[1]).toEqual({ name: 'eth0', mac: '52:54:00:aa:bb:cc', state: 'UP', mtu: 1500, ipv4: ['10.0.0.2/24'], ipv6: [] });
  });

  it('tolerates missing tools: empty sections leave facts out, SELinux reads disabled', () => {
    const f = parseFacts('\n@@tsbm:hostname\nx\n@@tsbm:lsblk\n\n@@tsbm:selinux\n\n@@tsbm:end\n');
    expect(f.disks).toEqual([]);
    expect(f.system_uuid).toBeUndefined();
    expect(f.selinux).toEqual({ status: 'disabled', mode: 'disabled' });
  });

  it('the script runs under a minimal PATH (tools missing) and still ends cleanly', () => {
    const r = spawnSync('/bin/sh', ['-c', FACTS_SCRIPT], { encoding: 'utf8', env: { PATH: '/nonexistent' } });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('@@tsbm:end');
    expect(parseFacts(r.stdout).disks).toEqual([]);
  });
});
