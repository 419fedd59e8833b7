import { describe, expect, it } from 'vitest';
import { sandboxCommand } from '../../packages/lab/src/lab/command-rewrite.js';
import { faultsFor, parseFaultSpec } from '../../packages/lab/src/lab/faults.js';

const R = '/lab/nodes/node01/root';

describe('sandboxCommand', () => {
  it.each([
    ['cat /sys/class/dmi/id/product_uuid', `cat ${R}/sys/class/dmi/id/product_uuid`],
    ["rm -f '/run/tsbm/auth x.json'", `rm -f '${R}/run/tsbm/auth x.json'`],
    ['podman pull --authfile=/run/a.json ref', `podman pull --authfile=${R}/run/a.json ref`],
    ['podman run -v /dev:/dev -v /tmp:/tmp img', `podman run -v ${R}/dev:${R}/dev -v ${R}/tmp:${R}/tmp img`],
    ['dd if=/tmp/cd.iso of=/dev/vda bs=1M', `dd if=${R}/tmp/cd.iso of=${R}/dev/vda bs=1M`],
    ['sgdisk -p /dev/vda 2>/dev/null', `sgdisk -p ${R}/dev/vda 2>/dev/null`],
    ['cat /dev/null; head -c1 /dev/urandom', 'cat /dev/null; head -c1 /dev/urandom'],
    ["sh -c 'cat /proc/meminfo'", `sh -c 'cat ${R}/proc/meminfo'`],
    ['/usr/bin/env ls /etc/os-release', `/usr/bin/env ls ${R}/etc/os-release`],
    ['echo /devices /running /tmpfoo', 'echo /devices /running /tmpfoo'],
  ])('%s', (cmd, want) => {
    expect(sandboxCommand(cmd, R)).toBe(want);
  });
});

describe('fault spec', () => {
  it('selects nodes by name, index, every:N and *', () => {
    const spec = parseFaultSpec('node02:bmc_503=0.3,bmc_latency=200;3:never_boots;every:2:pull_fail;*:ssh_drop=4');
    expect(faultsFor(spec, 'node02', 2)).toEqual({ bmc503: 0.3, bmcLatencyMs: 200, pullFail: true, sshDrop: 4 });
    expect(faultsFor(spec, 'node03', 3)).toEqual({ neverBoots: true, sshDrop: 4 });
    expect(faultsFor(spec, 'node01', 1)).toEqual({ sshDrop: 4 });
  });
  it('explains bad specs', () => {
    expect(() => parseFaultSpec('node1:explode')).toThrow(/unknown fault "explode"/);
    expect(() => parseFaultSpec('node1:bmc_503=2')).toThrow(/rate between 0 and 1/);
    expect(() => parseFaultSpec('nocolon')).toThrow(/SELECTOR:faults/);
  });
});
