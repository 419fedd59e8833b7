// The image inspector on hand-built headers: each format recognised from its content, every
// hostile qcow2 feature named, the declared format compared, the virtual size bounded, and no
// header (random, truncated, mutated) that makes it throw.
import { describe, expect, it } from 'vitest';
import { inspectImage } from '../../src/images/inspect/detect.js';
import { judgeImage, type VerdictInput } from '../../src/images/inspect/verdict.js';
import { seededRandom } from '../../src/util/seeded-random.js';
import {
  EXT_BACKING_FORMAT,
  EXT_DATA_FILE,
  gptHeader,
  isoHeader,
  magicHeader,
  mbrHeader,
  qcow2Header,
  vdiHeader,
  vhdHeader,
  vmdkDescriptor,
  vmdkSparseHeader,
} from '../helpers/image-headers.js';

const GIB = 1024 ** 3;
const judge = (b: Buffer, v: Partial<VerdictInput> = {}) =>
  judgeImage(inspectImage(b), { name: 'http://img/os.img', maxVirtualBytes: 1024 * GIB, ...v });

describe('the image inspector: formats from content', () => {
  it('reads qcow2 v2 and v3 with their virtual size, and passes a clean one', () => {
    for (const version of [2, 3]) {
      const i = inspectImage(qcow2Header({ version, virtualSize: 5n * BigInt(GIB) }));
      expect(i).toEqual({ format: 'qcow2', virtualSize: 5 * GIB, unsafe: [] });
    }
    expect(judge(qcow2Header())).toMatchObject({ ok: true, format: 'qcow2' });
    expect(judge(qcow2Header(), { declared: 'qcow2' })).toMatchObject({ ok: true, format: 'qcow2' });
  });

  it('raw disks: GPT, MBR, or anything else; a FAT boot sector is not taken for a partition table', () => {
    expect(inspectImage(gptHeader())).toEqual({ format: 'raw', table: 'gpt', unsafe: [] });
    expect(inspectImage(mbrHeader())).toEqual({ format: 'raw', table: 'mbr', unsafe: [] });
    expect(inspectImage(Buffer.alloc(65536))).toEqual({ format: 'raw', unsafe: [] });
    expect(inspectImage(Buffer.alloc(0))).toEqual({ format: 'raw', unsafe: [] });
    const fat = mbrHeader();
    fat.fill(0x90, 446, 510); // boot code where a table's entries would be
    expect(inspectImage(fat).table).toBeUndefined();
    const gpt4k = Buffer.alloc(65536);
    gpt4k.write('EFI PART', 4096, 'latin1');
    expect(inspectImage(gpt4k).table).toBe('gpt');
  });

  it('recognises the formats it never writes, an ISO (hybrid too) before its MBR', () => {
    const cases: Array<[Buffer, string]> = [
      [isoHeader(), 'iso'],
      [isoHeader(true), 'iso'],
      [vmdkSparseHeader(), 'vmdk'],
      [vmdkDescriptor(), 'vmdk'],
      [vhdHeader(), 'vhd'],
      [magicHeader('vhdxfile'), 'vhdx'],
      [vdiHeader(), 'vdi'],
      [magicHeader('QED\0'), 'qed'],
      [magicHeader('LUKS\xba\xbe'), 'luks'],
    ];
    for (const [b, format] of cases) expect(inspectImage(b).format, format).toBe(format);
    expect(inspectImage(vmdkSparseHeader(2097152n)).virtualSize).toBe(GIB);
    expect(inspectImage(vhdHeader(3n * BigInt(GIB))).virtualSize).toBe(3 * GIB);
    expect(inspectImage(vmdkDescriptor()).unsafe).toEqual(['it is a vmdk descriptor naming other files as its extents']);
  });
});

describe('the image inspector: hostile qcow2 headers', () => {
  const unsafe = (b: Buffer) => inspectImage(b).unsafe.join('; ');

  it('a backing file, by path or as a json: specification, or beyond the bytes read', () => {
    expect(unsafe(qcow2Header({ backing: '/etc/shadow' }))).toBe('it names a backing file "/etc/shadow"');
    const json = 'json:{"driver":"raw","file":{"driver":"file","filename":"/root/.ssh/id_rsa"}}';
    expect(unsafe(qcow2Header({ backing: json }))).toBe(`it names a backing file given as a json: specification ${JSON.stringify(json)}`);
    const far = qcow2Header();
    far.writeBigUInt64BE(1n << 40n, 8);
    far.writeUInt32BE(12, 16);
    expect(unsafe(far)).toBe(`it names a backing file (at byte ${1n << 40n})`);
    // A backing name's length alone (offset 0) is refused too.
    const lenOnly = qcow2Header();
    lenOnly.writeUInt32BE(5, 16);
    expect(unsafe(lenOnly)).toMatch(/names a backing file/);
  });

  it('an external data file: the feature bit, the extension naming it, or both', () => {
    expect(unsafe(qcow2Header({ incompatible: 1n << 2n }))).toBe('it keeps its data in an external data file');
    expect(unsafe(qcow2Header({ incompatible: 1n << 2n, extensions: [[EXT_DATA_FILE, '/dev/sda']] }))).toBe(
      'it keeps its data in an external data file; it names an external data file "/dev/sda"',
    );
    expect(unsafe(qcow2Header({ extensions: [[EXT_DATA_FILE, 'json:{"driver":"file"}']] }))).toBe(
      'it names an external data file given as a json: specification "json:{\\"driver\\":\\"file\\"}"',
    );
    expect(unsafe(qcow2Header({ extensions: [[EXT_BACKING_FORMAT, 'raw']] }))).toBe('');
    expect(unsafe(qcow2Header({ extensions: [[EXT_BACKING_FORMAT, 'json']] }))).toBe('its backing format is a json: specification');
  });

  it('unknown or corrupt features, encryption, odd versions, cluster sizes and header lengths', () => {
    expect(unsafe(qcow2Header({ incompatible: 1n << 10n }))).toBe('it sets incompatible feature bits tsbm does not know (0x400)');
    expect(unsafe(qcow2Header({ incompatible: 1n << 1n }))).toBe('it is marked corrupt');
    expect(unsafe(qcow2Header({ incompatible: 1n }))).toBe(''); // dirty: qemu-img reads it
    expect(unsafe(qcow2Header({ encrypted: true }))).toBe('it is encrypted');
    expect(unsafe(qcow2Header({ version: 4 }))).toBe('its qcow2 version is 4 (qemu-img knows 2 and 3)');
    expect(unsafe(qcow2Header({ clusterBits: 30 }))).toBe("its cluster size 2^30 is outside qcow2's 512 bytes to 2 MiB");
    expect(unsafe(qcow2Header({ headerLength: 101 }))).toMatch(/header length 101 is not valid/);
  });

  it('extensions that run past the bytes read, or never end, are refused rather than guessed', () => {
    expect(unsafe(qcow2Header({ noEnd: 0x11 }))).toMatch(/header extensions run past the inspected bytes/);
    const many = qcow2Header({ extensions: Array.from({ length: 1100 }, () => [0x1234, ''] as [number, string]) });
    expect(unsafe(many)).toBe('it has more than 1024 header extensions');
    expect(unsafe(qcow2Header().subarray(0, 60))).toBe('its header is cut short (60 of 104 bytes)');
  });

  it('a virtual size beyond 2^53 bytes is unreadable, and one over the bound is refused by name', () => {
    expect(unsafe(qcow2Header({ virtualSize: (1n << 64n) - 1n }))).toMatch(/virtual size is unreadable or beyond 2\^53/);
    const bomb = judge(qcow2Header({ virtualSize: 4n * BigInt(GIB) }), { maxVirtualBytes: GIB });
    expect(bomb).toMatchObject({ ok: false });
    expect(!bomb.ok && bomb.message).toBe('http://img/os.img is refused: its virtual size 4 GiB is over tsbm_max_image_virtual (1 GiB)');
  });
});

describe('the verdict: content against what was declared', () => {
  it('a qcow2 declared raw (or named *.img and declared nothing) is never written as raw', () => {
    const v = judge(qcow2Header(), { declared: 'raw' });
    expect(v.ok).toBe(false);
    expect(!v.ok && v.message).toBe('http://img/os.img is refused: image_disk_format says raw, but the image is qcow2 (1 GiB virtual)');
    expect(judge(qcow2Header())).toMatchObject({ ok: true, format: 'qcow2' });
  });

  it('a raw disk declared qcow2 is refused; declared raw or not at all, it is raw', () => {
    expect(judge(gptHeader(), { declared: 'qcow2' })).toMatchObject({ ok: false, message: expect.stringMatching(/says qcow2, but the image is raw \(GPT\)/) });
    expect(judge(gptHeader(), { declared: 'raw' })).toMatchObject({ ok: true, format: 'raw' });
    expect(judge(mbrHeader())).toMatchObject({ ok: true, format: 'raw' });
  });

  it('a hostile qcow2 declared raw names both the mismatch and the backing file', () => {
    const v = judge(qcow2Header({ backing: '/etc/shadow' }), { declared: 'raw' });
    expect(!v.ok && v.message).toMatch(/says raw, but the image is qcow2 .*; it names a backing file "\/etc\/shadow"/);
  });

  it('formats tsbm does not write are refused with what to do; an ISO as in Ironic', () => {
    const iso = judge(isoHeader(true));
    expect(iso).toMatchObject({ ok: false, message: 'http://img/os.img is refused: the image is iso, and tsbm writes raw and qcow2 images only' });
    expect(!iso.ok && iso.hint).toMatch(/ISO image is not written to a disk \(as in Ironic\)/);
    const vmdk = judge(vmdkSparseHeader(), { declared: 'raw' });
    expect(!vmdk.ok && vmdk.hint).toMatch(/qemu-img convert -f vmdk -O qcow2/);
  });
});

describe('the inspector never throws', () => {
  it('on random bytes, truncations and single-byte mutations of every header', () => {
    const rnd = seededRandom(29);
    const bases = [qcow2Header({ backing: '/x', extensions: [[EXT_DATA_FILE, '/y']] }), qcow2Header({ version: 2 }), gptHeader(), isoHeader(true), vmdkSparseHeader(), vhdHeader(), vdiHeader()];
    for (let n = 0; n < 3000; n++) {
      const base = bases[n % bases.length]!;
      const b = Buffer.from(base.subarray(0, Math.floor(rnd() * base.length)));
      for (let k = 0; k < 8 && b.length; k++) b[Math.floor(rnd() * Math.min(b.length, 256))] = Math.floor(rnd() * 256);
      const i = inspectImage(b);
      expect(typeof i.format).toBe('string');
      judgeImage(i, { name: 'x', maxVirtualBytes: GIB });
    }
    for (let n = 0; n < 200; n++) {
      const b = Buffer.alloc(Math.floor(rnd() * 70000));
      for (let k = 0; k < b.length; k += 97) b[k] = Math.floor(rnd() * 256);
      inspectImage(b);
    }
  });
});
