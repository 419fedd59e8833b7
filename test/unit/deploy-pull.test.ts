import { describe, expect, it } from 'vitest';
import { registriesConf } from '../../src/modules/bootc/containers-conf.js';
import { overridesOf, REGISTRIES_CONF_FILE } from '../../src/modules/bootc/drop-in-order.js';
import { lastLine } from '../../src/modules/bootc/podman_pull.js';
import { parseManifest, withDigest } from '../../src/modules/bootc/image-size.js';
import { parseImageSource } from '../../src/module-api/image-ref.js';
import { memAvailableBytes, neededBytes } from '../../src/module-api/memory.js';
import { helpHasFlag, parsePodmanVersion } from '../../src/module-api/podman-version.js';
import { buildAuthFile } from '../../src/module-api/pull-secret.js';
import { thrownBy } from '../helpers/thrown.js';

describe('image_source', () => {
  it.each([
    ['oci://quay.io/fedora/fedora-bootc:41', 'quay.io/fedora/fedora-bootc:41', 'quay.io'],
    ['oci://10.88.0.1:5001/bootc/test:1', '10.88.0.1:5001/bootc/test:1', '10.88.0.1:5001'],
    ['oci://localhost/x:1', 'localhost/x:1', 'localhost'],
    ['oci://library/fedora', 'library/fedora', 'docker.io'],
  ])('%s', (src, ref, registry) => {
    expect(parseImageSource(src)).toEqual({ ref, registry });
  });
  it.each(['quay.io/x:1', 'http://x/y.qcow2', 'oci://', 'oci://-rm x'])('rejects %s', (s) => {
    expect(() => parseImageSource(s)).toThrow(/oci/);
  });
});

describe('pull secret', () => {
  const token = Buffer.from('tester:s3cret').toString('base64');
  it('token becomes an auths file for the image registry', () => {
    const a = buildAuthFile(token, '10.88.0.1:5001');
    expect(JSON.parse(a.json)).toEqual({ auths: { '10.88.0.1:5001': { auth: token } } });
  });
  it('a full auths JSON is passed through', () => {
    const doc = { auths: { 'quay.io': { auth: token } } };
    expect(buildAuthFile(JSON.stringify(doc), 'x').registries).toEqual(['quay.io']);
  });
  it('errors never contain the secret', () => {
    for (const bad of ['{"auths": ', '{"x": 1}', 'not base64 with spaces s3cret']) {
      const e = thrownBy(() => buildAuthFile(bad, 'r'));
      expect((e as Error).message).not.toContain('s3cret');
    }
  });
});

describe('memory and podman probes', () => {
  it('MemAvailable', () => {
    expect(memAvailableBytes('MemTotal: 100 kB\nMemAvailable:    2048 kB\n')).toBe(2048 * 1024);
    expect(memAvailableBytes('MemTotal: 100 kB\n')).toBeUndefined();
  });
  it('needed bytes grow with the image', () => {
    expect(neededBytes({ compressed: 1000 })).toBeGreaterThan(3500);
    expect(neededBytes({})).toBeUndefined();
  });
  it('podman version and flag probe', () => {
    expect(parsePodmanVersion('podman version 4.3.1')).toEqual([4, 3, 1]);
    expect(helpHasFlag('      --retry-delay string   delay between retries', '--retry-delay')).toBe(true);
    expect(helpHasFlag('      --retry uint   number of times', '--retry-delay')).toBe(false);
  });
  it('manifest sizes and index resolution', () => {
    expect(
      parseManifest(
        JSON.stringify({ config: { size: 10 }, layers: [{ size: 100 }, { size: 200 }] }),
        'amd64',
      ),
    ).toEqual({
      kind: 'image',
      size: { compressed: 310, layers: 2 },
    });
    const idx = {
      manifests: [
        { digest: 'sha256:a', platform: { architecture: 'arm64', os: 'linux' } },
        { digest: 'sha256:b', platform: { architecture: 'amd64', os: 'linux' } },
      ],
    };
    expect(parseManifest(JSON.stringify(idx), 'amd64')).toEqual({ kind: 'index', digest: 'sha256:b' });
    expect(withDigest('reg:5000/a/b:tag', 'sha256:b')).toBe('reg:5000/a/b@sha256:b');
  });
  it('registries drop-in quotes values', () => {
    const t = registriesConf(
      [{ prefix: 'quay.io', mirrors: ['mirror.lab:5000'], insecure: true }],
      ['lab:5001'],
    );
    expect(t).toContain('location = "quay.io"');
    expect(t).toContain('[[registry.mirror]]\nlocation = "mirror.lab:5000"\ninsecure = true');
    expect(t).toContain('location = "lab:5001"\ninsecure = true');
  });
});

describe("podman 4.3's manifest inspect error", () => {
  it('yields the quoted manifest', async () => {
    const { quotedManifest } = await import('../../src/modules/bootc/image-size.js');
    const err =
      'Error: parsing manifest blob "{\\"schemaVersion\\":2,\\"config\\":{\\"size\\":409},\\"layers\\":[{\\"size\\":158}]}" as a "application/vnd.oci.image.manifest.v1+json": Treating single images as manifest lists is not implemented';
    const text = quotedManifest(err);
    expect(parseManifest(text as string, 'amd64')).toEqual({
      kind: 'image',
      size: { compressed: 567, layers: 1 },
    });
    expect(quotedManifest('Error: unauthorized')).toBeUndefined();
  });
});

describe('pull --retry-delay from the podman version wait_agent read', () => {
  it('5.0 and later have it, 4.x not; unreadable text decides nothing', async () => {
    const { pullHasRetryDelay } = await import('../../src/module-api/podman-version.js');
    expect(pullHasRetryDelay('podman version 5.0.0')).toBe(true);
    expect(pullHasRetryDelay('podman version 5.2.2')).toBe(true);
    expect(pullHasRetryDelay('podman version 4.9.4')).toBe(false);
    expect(pullHasRetryDelay('podman version 4.3.1')).toBe(false);
    expect(pullHasRetryDelay('podman')).toBeUndefined();
    expect(pullHasRetryDelay(undefined)).toBeUndefined();
  });
});

describe("podman's error in a pull failure", () => {
  it('is said once when a retry warning carried it first', () => {
    const stderr = [
      'Trying to pull reg.sim:5000/a/b:1...',
      'time="2026-12-02T10:00:00Z" level=warning msg="Failed, retrying in 5s ... (1/3). Error: initializing source docker://reg.sim:5000/a/b:1: reading manifest 1 in reg.sim:5000/a/b: unauthorized: authentication required"',
      'Error: initializing source docker://reg.sim:5000/a/b:1: reading manifest 1 in reg.sim:5000/a/b: unauthorized: authentication required',
    ].join('\n');
    expect(lastLine(stderr)).toBe('Error: initializing source docker://reg.sim:5000/a/b:1: reading manifest 1 in reg.sim:5000/a/b: unauthorized: authentication required');
  });
  it('keeps two different last lines, and a lone one', () => {
    expect(lastLine('Copying blob 1\nError: writing blob: no space left on device\n')).toBe('Copying blob 1 | Error: writing blob: no space left on device');
    expect(lastLine('Error: x\n')).toBe('Error: x');
  });
});

describe("tsbm's drop-ins against a ramdisk's own", () => {
  it('sort after digits, capitals and most names, as podman orders them (bytes)', () => {
    const listing = ['50-site.conf\t reg.sim', '99-site.conf\t reg.sim', 'ZZ-site.conf\t reg.sim', 'zz-site.conf\t reg.sim', 'zzz-site.conf\t reg.sim', 'zzzz-other.conf\t', `${REGISTRIES_CONF_FILE}\t reg.sim`].join('\n');
    expect(overridesOf(listing, REGISTRIES_CONF_FILE)).toEqual([{ file: 'zzz-site.conf', words: ['reg.sim'] }]);
  });
});
