// `tsbm configdrive build` through the built CLI (bin/tsbm.js -> dist/), read back with isoinfo.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const built = existsSync('dist/cli/configdrive.js');
const haveIsoinfo = spawnSync('sh', ['-c', 'command -v isoinfo']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'tsbm-cdcli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tsbm = (...args: string[]) => spawnSync('node', ['bin/tsbm.js', ...args], { encoding: 'utf8' });
const isoinfo = (...args: string[]) => spawnSync('isoinfo', args, { encoding: 'utf8' }).stdout;

describe.skipIf(!built || !haveIsoinfo)('tsbm configdrive build (needs `npm run build` and isoinfo)', () => {
  it('--from a YAML dict writes a config-2 ISO with the OpenStack layout', () => {
    const from = join(dir, 'cd.yml');
    writeFileSync(
      from,
      'meta_data:\n  hostname: n1.example\nuser_data: |\n  #cloud-config\n  hostname: n1\n',
    );
    const out = join(dir, 'a.iso');
    const r = tsbm('configdrive', 'build', '--from', from, '-o', out);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/wrote .*a\.iso: config-2 ISO from a dict, \d+ bytes, sha256 [0-9a-f]{64}/);
    expect(isoinfo('-d', '-i', out)).toContain('Volume id: config-2');
    expect(isoinfo('-R', '-x', '/openstack/2012-08-10/user_data', '-i', out)).toBe(
      '#cloud-config\nhostname: n1\n',
    );
    expect(JSON.parse(isoinfo('-R', '-x', '/openstack/latest/meta_data.json', '-i', out))).toMatchObject({
      hostname: 'n1.example',
      name: 'node',
    });
  });

  it('--host with an inventory takes instance_info.configdrive, name and system_uuid from the host', () => {
    const inv = join(dir, 'inv.yml');
    writeFileSync(
      inv,
      'all:\n  hosts:\n    node1:\n      system_uuid: 4c4c4544-0000-0000-0000-000000000001\n      instance_info:\n        configdrive:\n          vendor_data: {a: 1}\n',
    );
    const out = join(dir, 'b.iso');
    expect(tsbm('configdrive', 'build', '--host', 'node1', '-i', inv, '-o', out).status).toBe(0);
    expect(JSON.parse(isoinfo('-J', '-x', '/openstack/latest/meta_data.json', '-i', out))).toEqual({
      uuid: '4c4c4544-0000-0000-0000-000000000001',
      name: 'node1',
    });
    expect(JSON.parse(isoinfo('-J', '-x', '/openstack/latest/vendor_data2.json', '-i', out))).toEqual({
      a: 1,
    });
  });

  it('nothing to build is a usage error (exit 5) with a hint', () => {
    const r = tsbm('configdrive', 'build', '-o', join(dir, 'c.iso'));
    expect(r.status).toBe(5);
    expect(r.stderr).toContain('give --from');
  });
});
