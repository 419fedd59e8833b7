import { describe, expect, it } from 'vitest';
import { checkIdentity, macsFromIpLink } from '../../src/modules/ramdisk/identity.js';

const U = '4c4c4544-0042-3510-8052-b2c04f4e4b32';
const M = '52:54:00:aa:bb:01';

describe('identity check', () => {
  it('auto: uuid match (case and braces ignored)', () => {
    const v = checkIdentity('auto', {
      bmcUuid: U.toUpperCase(),
      hostUuid: `{${U}}`,
      bmcMacs: [],
      hostMacs: [],
    });
    expect(v).toMatchObject({ ok: true, method: 'uuid' });
  });
  it('auto: uuid mismatch names both values', () => {
    const v = checkIdentity('auto', {
      bmcUuid: U,
      hostUuid: '00000000-0000-0000-0000-000000000001',
      bmcMacs: [M],
      hostMacs: [M],
    });
    expect(v.ok).toBe(false);
    expect(v.message).toContain(U);
    expect(v.message).toContain('00000000-0000-0000-0000-000000000001');
  });
  it('auto: no product_uuid falls back to MACs and says so', () => {
    const v = checkIdentity('auto', {
      bmcUuid: U,
      bmcMacs: [M.toUpperCase()],
      hostMacs: ['52-54-00-aa-bb-01'],
    });
    expect(v).toMatchObject({ ok: true, method: 'mac' });
    expect(v.message).toMatch(/no product_uuid, fell back to MACs/);
  });
  it('auto: MAC mismatch fails with both lists', () => {
    const v = checkIdentity('auto', { bmcMacs: [M], hostMacs: ['52:54:00:aa:bb:99'] });
    expect(v.ok).toBe(false);
    expect(v.message).toContain(M);
    expect(v.message).toContain('52:54:00:aa:bb:99');
  });
  it('auto with no data passes but reports method none', () => {
    expect(checkIdentity('auto', { bmcMacs: [], hostMacs: [M] })).toMatchObject({ ok: true, method: 'none' });
  });
  it('uuid mode requires a uuid on both sides', () => {
    expect(checkIdentity('uuid', { bmcUuid: U, bmcMacs: [M], hostMacs: [M] }).ok).toBe(false);
  });
  it('both requires both', () => {
    expect(
      checkIdentity('both', { bmcUuid: U, hostUuid: U, bmcMacs: [M], hostMacs: ['52:54:00:aa:bb:02'] }).ok,
    ).toBe(false);
    expect(checkIdentity('both', { bmcUuid: U, hostUuid: U, bmcMacs: [M], hostMacs: [M] }).ok).toBe(true);
  });
  it('any: one matching is enough', () => {
    expect(checkIdentity('any', { bmcUuid: U, hostUuid: 'x', bmcMacs: [M], hostMacs: [M] }).ok).toBe(true);
    expect(checkIdentity('any', { bmcUuid: U, hostUuid: 'x', bmcMacs: [M], hostMacs: [] }).ok).toBe(false);
  });
  it('off never fails', () => {
    expect(checkIdentity('off', { bmcUuid: U, hostUuid: 'x', bmcMacs: [], hostMacs: [] }).ok).toBe(true);
  });
  it('a UUID with the first three fields byte-swapped (SMBIOS < 2.6) still matches', () => {
    const swapped = '4445 4c4c-4200-1035-8052-b2c04f4e4b32'.replace(' ', '');
    expect(checkIdentity('uuid', { bmcUuid: U, hostUuid: swapped, bmcMacs: [], hostMacs: [] }).ok).toBe(true);
    expect(
      checkIdentity('uuid', {
        bmcUuid: U,
        hostUuid: '4445 4c4c-4200-1035-8052-b2c04f4e4b33'.replace(' ', ''),
        bmcMacs: [],
        hostMacs: [],
      }).ok,
    ).toBe(false);
  });
  it('macsFromIpLink drops loopback and zero MACs', () => {
    const j = JSON.stringify([
      { ifname: 'lo', link_type: 'loopback', address: '00:00:00:00:00:00' },
      { ifname: 'eth0', link_type: 'ether', address: '52:54:00:AA:BB:01' },
      { ifname: 'tun0', link_type: 'none' },
    ]);
    expect(macsFromIpLink(j)).toEqual(['52:54:00:aa:bb:01']);
  });
});
