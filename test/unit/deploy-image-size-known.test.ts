// The image size the controller read in the deploy preflight, kept for podman_pull's memory
// check: an image manifest's own size, an index resolved per architecture (one fetch each for
// the run), and nothing when the controller cannot tell (the pull then probes on the ramdisk).
import { describe, expect, it } from 'vitest';
import { knownImageSize, rememberImageSize, sizesFromManifest } from '../../src/modules/bootc/image-size-known.js';

const signal = new AbortController().signal;
const image = (layers: number[]) => JSON.stringify({ schemaVersion: 2, config: { size: 1000 }, layers: layers.map((size) => ({ size })) });
const index = JSON.stringify({
  schemaVersion: 2,
  manifests: [
    { digest: 'sha256:aaa', platform: { architecture: 'amd64', os: 'linux' } },
    { digest: 'sha256:bbb', platform: { architecture: 'arm64', os: 'linux' } },
  ],
});

function services() {
  const m = new Map<string, unknown>();
  return {
    get: <T>(k: string, create: () => T): T => {
      if (!m.has(k)) m.set(k, create());
      return m.get(k) as T;
    },
  };
}

describe('sizesFromManifest', () => {
  it("an image manifest: its layers and config, whatever the ramdisk's architecture; nothing fetched", async () => {
    const fetched: string[] = [];
    const sizes = sizesFromManifest(image([5000, 7000]), async (d) => {
      fetched.push(d);
      return undefined;
    });
    expect(await sizes('amd64', signal)).toEqual({ compressed: 13000, layers: 2 });
    expect(await sizes('arm64', signal)).toEqual({ compressed: 13000, layers: 2 });
    expect(fetched).toEqual([]);
  });
  it("an index: the platform manifest of the node's architecture, fetched once per architecture", async () => {
    const fetched: string[] = [];
    const sizes = sizesFromManifest(index, async (d) => {
      fetched.push(d);
      return d === 'sha256:aaa' ? image([100]) : image([200, 300]);
    });
    const [a, b] = await Promise.all([sizes('amd64', signal), sizes('amd64', signal)]);
    expect(a).toEqual({ compressed: 1100, layers: 1 });
    expect(b).toEqual(a);
    expect(await sizes('arm64', signal)).toEqual({ compressed: 1500, layers: 2 });
    expect(fetched).toEqual(['sha256:aaa', 'sha256:bbb']);
  });
  it('nothing known: no platform for the architecture, a failed fetch, a manifest without layer sizes', async () => {
    expect(await sizesFromManifest(index, async () => image([1]))('s390x', signal)).toBeUndefined();
    expect(
      await sizesFromManifest(index, async () => {
        throw new Error('registry went away');
      })('amd64', signal),
    ).toBeUndefined();
    expect(await sizesFromManifest(index, async () => undefined)('amd64', signal)).toBeUndefined();
    expect(await sizesFromManifest('{"schemaVersion":1,"fsLayers":[]}', async () => undefined)('amd64', signal)).toBeUndefined();
  });
});

describe('the run keeps what the preflight read, per image reference', () => {
  it('the first reading stays; another reference has none', async () => {
    const s = services();
    rememberImageSize(s, 'reg:5000/a:1', sizesFromManifest(image([10]), async () => undefined));
    rememberImageSize(s, 'reg:5000/a:1', sizesFromManifest(image([99]), async () => undefined));
    expect(await knownImageSize(s, 'reg:5000/a:1')?.('amd64', signal)).toEqual({ compressed: 1010, layers: 1 });
    expect(knownImageSize(s, 'reg:5000/a:2')).toBeUndefined();
  });
});
