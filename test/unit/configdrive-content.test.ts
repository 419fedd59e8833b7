import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  buildConfigDriveIso,
  configDriveFiles,
  nodeIdentity,
  stableUuid,
} from '../../src/configdrive/content.js';
import { buildIso, isIso9660, isoVolumeId } from '../../src/configdrive/iso9660.js';
import { decodeIsoPayload, resolveConfigDrive } from '../../src/configdrive/source.js';

const node = { name: 'node1', uuid: '11111111-2222-3333-4444-555555555555' };
const fileMap = (fs: { path: string; data: Buffer }[]) => new Map(fs.map((f) => [f.path, f.data.toString()]));

describe('configdrive content from a dict', () => {
  it('writes every file under both version directories', () => {
    const files = fileMap(
      configDriveFiles(
        {
          meta_data: { hostname: 'h' },
          network_data: { links: [] },
          user_data: '#cloud-config\n',
          vendor_data: { a: 1 },
        },
        node,
      ),
    );
    for (const dir of ['openstack/2012-08-10', 'openstack/latest']) {
      expect(JSON.parse(files.get(`${dir}/meta_data.json`)!)).toEqual({
        uuid: node.uuid,
        name: 'node1',
        hostname: 'h',
      });
      expect(JSON.parse(files.get(`${dir}/network_data.json`)!)).toEqual({ links: [] });
      expect(files.get(`${dir}/user_data`)).toBe('#cloud-config\n');
      expect(JSON.parse(files.get(`${dir}/vendor_data2.json`)!)).toEqual({ a: 1 });
    }
    expect(files.size).toBe(8);
  });

  it('meta_data given by the user wins over the node defaults', () => {
    const files = fileMap(configDriveFiles({ meta_data: { uuid: 'mine', name: 'other' } }, node));
    expect(JSON.parse(files.get('openstack/latest/meta_data.json')!)).toEqual({
      uuid: 'mine',
      name: 'other',
    });
  });

  it('only meta_data when nothing else is given; object/list user_data is JSON', () => {
    expect(fileMap(configDriveFiles({}, node)).size).toBe(2);
    const obj = fileMap(configDriveFiles({ user_data: { runcmd: ['x'] } }, node));
    expect(JSON.parse(obj.get('openstack/latest/user_data')!)).toEqual({ runcmd: ['x'] });
    const list = fileMap(configDriveFiles({ user_data: [1, 2] }, node));
    expect(list.get('openstack/latest/user_data')).toBe('[1,2]');
  });

  it('node identity: Ironic uuid, then system_uuid, then a stable generated uuid', () => {
    expect(nodeIdentity({ inventory_hostname: 'n', uuid: 'U', system_uuid: 'S' })).toEqual({
      name: 'n',
      uuid: 'U',
    });
    expect(nodeIdentity({ inventory_hostname: 'n', system_uuid: 'S' })).toEqual({ name: 'n', uuid: 'S' });
    const gen = nodeIdentity({ inventory_hostname: 'n' });
    expect(gen.uuid).toBe(stableUuid('n'));
    expect(gen.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(stableUuid('m')).not.toBe(gen.uuid);
  });

  it('the same dict gives byte-identical ISOs (reruns can detect "unchanged")', () => {
    const a = buildConfigDriveIso({ user_data: 'x' }, node);
    const b = buildConfigDriveIso({ user_data: 'x' }, node);
    expect(a.equals(b)).toBe(true);
    expect(isoVolumeId(a)).toBe('config-2');
  });
});

describe('configdrive sources', () => {
  const iso = buildIso([{ path: 'openstack/latest/meta_data.json', data: Buffer.from('{}') }], {
    volumeId: 'config-2',
  });

  it('a gzip+base64 string decodes to the ISO', async () => {
    const s = gzipSync(iso).toString('base64');
    const r = await resolveConfigDrive(s, node);
    expect(r.source).toBe('iso-string');
    expect(r.iso.equals(iso)).toBe(true);
  });

  it('plain base64 (not gzipped) is accepted too', () => {
    expect(decodeIsoPayload(Buffer.from(iso.toString('base64')), 'x').equals(iso)).toBe(true);
  });

  it('base64 that is not an ISO is refused with a hint', async () => {
    await expect(
      resolveConfigDrive(gzipSync(Buffer.alloc(50000, 1)).toString('base64'), node),
    ).rejects.toThrow(/does not hold an ISO 9660/);
    await expect(resolveConfigDrive('not base64 !!', node)).rejects.toThrow(
      /neither an ISO 9660 image nor base64/,
    );
  });

  it('over 64 MiB is an error', async () => {
    const huge = gzipSync(Buffer.alloc(65 * 1024 * 1024)).toString('base64');
    await expect(resolveConfigDrive(huge, node)).rejects.toThrow(/64 MiB/);
    await expect(resolveConfigDrive({ user_data: 'x'.repeat(33 * 1024 * 1024) }, node)).rejects.toThrow(
      /64 MiB/,
    );
  });

  it('a dict with an unknown key or a wrong type is refused', async () => {
    await expect(resolveConfigDrive({ metadata: {} }, node)).rejects.toThrow(/invalid dict/);
    await expect(resolveConfigDrive({ user_data: 5 }, node)).rejects.toThrow(/invalid dict at \/user_data/);
    await expect(resolveConfigDrive(undefined, node)).rejects.toThrow(/no config drive/);
  });

  it('a dict builds an ISO', async () => {
    const r = await resolveConfigDrive({ user_data: 'hi' }, node);
    expect(r.source).toBe('dict');
    expect(isIso9660(r.iso)).toBe(true);
  });
});
