// The pure parts of the deploy preflight and the undeploy erase: registry challenges, image
// coordinates, which pull-secret entry applies, registry_endpoints, and the ranges an erase
// zeroes.
import { describe, expect, it } from 'vitest';
import { ERASE_SPAN_BYTES, eraseRanges, verifyArgv, zeroArgv } from '../../src/modules/disk/erase-plan.js';
import { coordinatesOf, parseImageSource } from '../../src/module-api/image-ref.js';
import { buildAuthFile, loginFor } from '../../src/module-api/pull-secret.js';
import { parseRegistryEndpoints, RegistryEndpointsError } from '../../src/modules/bootc/registry-endpoints.js';
import { parseChallenge } from '../../src/http/registry-auth.js';
import { problemLine } from '../../src/module-api/preflight-problem.js';

const MiB = 1024 * 1024;

describe('WWW-Authenticate challenges', () => {
  it('reads a Bearer challenge with quoted values, commas inside quotes and escapes', () => {
    expect(
      parseChallenge('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"'),
    ).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull,push' },
    });
    expect(parseChallenge('Basic realm="tsbm \\"test\\""')).toEqual({ scheme: 'basic', params: { realm: 'tsbm "test"' } });
    expect(parseChallenge('Bearer realm=https://a/token, service=reg')?.params).toEqual({ realm: 'https://a/token', service: 'reg' });
    expect(parseChallenge(undefined)).toBeUndefined();
  });
});

describe('image coordinates', () => {
  const at = (s: string) => coordinatesOf(parseImageSource(s));
  it('splits registry, repository and tag or digest; Docker Hub names get library/', () => {
    expect(at('oci://registry.lab:5000/os/fedora-bootc:41')).toEqual({ registry: 'registry.lab:5000', repository: 'os/fedora-bootc', reference: '41' });
    expect(at('oci://quay.io/fedora/fedora-bootc')).toEqual({ registry: 'quay.io', repository: 'fedora/fedora-bootc', reference: 'latest' });
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(at(`oci://quay.io/x/y:41@${digest}`).reference).toBe(digest);
    expect(at('oci://fedora:41')).toEqual({ registry: 'docker.io', repository: 'library/fedora', reference: '41' });
    expect(at('oci://docker.io/library/busybox')).toEqual({ registry: 'docker.io', repository: 'library/busybox', reference: 'latest' });
    expect(at('oci://localhost:5000/a/b:c').repository).toBe('a/b');
  });
});

describe('which pull-secret entry applies', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  it('a bare token is for the image registry', () => {
    const json = buildAuthFile(b64('u:p:with:colons'), 'reg.lab:5000').json;
    expect(loginFor(json, 'reg.lab:5000', 'os/x')).toEqual({ username: 'u', password: 'p:with:colons' });
    expect(loginFor(json, 'other.lab', 'os/x')).toBeUndefined();
  });
  it('the most specific auths key wins; schemes, /v1/ and Docker Hub aliases are folded', () => {
    const json = JSON.stringify({
      auths: {
        'https://quay.io/v1/': { auth: b64('all:1') },
        'quay.io/team': { auth: b64('team:2') },
        'quay.io/team/private': { username: 'priv', password: '3' },
        'https://index.docker.io/v1/': { identitytoken: 'refresh-me' },
      },
    });
    expect(loginFor(json, 'quay.io', 'other/x')).toEqual({ username: 'all', password: '1' });
    expect(loginFor(json, 'quay.io', 'team/x')).toEqual({ username: 'team', password: '2' });
    expect(loginFor(json, 'quay.io', 'team/private')).toEqual({ username: 'priv', password: '3' });
    // a key naming part of a path component does not match
    expect(loginFor(json, 'quay.io', 'teamwork/x')).toEqual({ username: 'all', password: '1' });
    expect(loginFor(json, 'docker.io', 'library/busybox')).toEqual({ identityToken: 'refresh-me' });
  });
});

describe('registry_endpoints', () => {
  it('maps a registry to where the controller reaches it; docker.io aliases fold', () => {
    const at = parseRegistryEndpoints({ 'registry.lab:5000': 'https://10.0.0.5:5000/', 'docker.io': 'http://127.0.0.1:5001' });
    expect(at('registry.lab:5000')).toBe('https://10.0.0.5:5000');
    expect(at('REGISTRY.lab:5000')).toBe('https://10.0.0.5:5000');
    expect(at('registry-1.docker.io')).toBe('http://127.0.0.1:5001');
    expect(at('quay.io')).toBeUndefined();
    expect(parseRegistryEndpoints(undefined)('x')).toBeUndefined();
  });
  it('refuses what is not a registry name or an http(s) origin, naming it', () => {
    expect(() => parseRegistryEndpoints(['a'])).toThrow(RegistryEndpointsError);
    expect(() => parseRegistryEndpoints({ 'reg/path': 'https://a' })).toThrow(/reg\/path/);
    expect(() => parseRegistryEndpoints({ reg: 'ftp://a' })).toThrow(/ftp:\/\/a/);
    expect(() => parseRegistryEndpoints({ reg: 'https://a/v2/' })).toThrow(RegistryEndpointsError);
    expect(() => parseRegistryEndpoints({ reg: 'https://user:pw@a' })).toThrow(RegistryEndpointsError);
  });
});

describe('erase ranges', () => {
  it('zeroes the first and last MiB of the disk and of each partition, merged and sorted', () => {
    const disk = 100 * MiB;
    const ranges = eraseRanges(disk, [
      { number: 1, offsetBytes: MiB, sizeBytes: 512 * 1024 }, // small: all of it, merged with the disk head
      { number: 2, offsetBytes: 10 * MiB, sizeBytes: 40 * MiB },
      { number: 3, offsetBytes: 98 * MiB, sizeBytes: 2 * MiB }, // ends at the disk end
    ]);
    expect(ranges).toEqual([
      { offset: 0, length: MiB + 512 * 1024 },
      { offset: 10 * MiB, length: MiB },
      { offset: 49 * MiB, length: MiB },
      { offset: 98 * MiB, length: 2 * MiB },
    ]);
  });
  it('a tiny disk is zeroed whole; partitions past the disk end are clipped', () => {
    expect(eraseRanges(64 * 1024, [])).toEqual([{ offset: 0, length: 64 * 1024 }]);
    expect(eraseRanges(8 * MiB, [{ number: 1, offsetBytes: 6 * MiB, sizeBytes: 100 * MiB }])).toEqual([
      { offset: 0, length: MiB },
      { offset: 6 * MiB, length: 2 * MiB },
    ]);
    expect(eraseRanges(8 * MiB, [{ number: 1, offsetBytes: 9 * MiB, sizeBytes: MiB }])).toEqual([
      { offset: 0, length: MiB },
      { offset: 7 * MiB, length: MiB },
    ]);
  });
  it('commands: dd in 512-byte sectors in place, cmp against zeros by offset', () => {
    const r = { offset: 7 * MiB, length: ERASE_SPAN_BYTES };
    expect(zeroArgv('/dev/sdb', r)).toEqual([
      'dd',
      'if=/dev/zero',
      'of=/dev/sdb',
      'bs=512',
      `seek=${(7 * MiB) / 512}`,
      `count=${MiB / 512}`,
      'conv=notrunc,fsync',
      'status=none',
    ]);
    expect(verifyArgv('/dev/sdb', r)).toEqual(['cmp', '-s', '-n', String(MiB), '-i', `${7 * MiB}:0`, '/dev/sdb', '/dev/zero']);
  });
});

describe('a preflight problem as a line', () => {
  it('names its check once: a message that starts with it is not prefixed again', () => {
    expect(problemLine({ check: 'registry', message: 'registry registry.sim:5000 refused the pull secret for a/b (UNAUTHORIZED)', fix: 'check it' })).toBe(
      'registry registry.sim:5000 refused the pull secret for a/b (UNAUTHORIZED) (check it)',
    );
    expect(problemLine({ check: 'registry', message: 'the pull secret has no access to a/b', fix: 'grant it' })).toBe('registry: the pull secret has no access to a/b (grant it)');
    expect(problemLine({ check: 'iso', message: 'no ramdisk_iso for this node', fix: 'set it' })).toBe('iso: no ramdisk_iso for this node (set it)');
  });
});
