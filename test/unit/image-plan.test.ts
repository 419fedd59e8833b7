// Pure rules of image deploys: what image_write accepts, how it reads the stream script's
// summary and curl's exit codes, the qcow2 memory check, progress text and LRU choices.
import { describe, expect, it } from 'vitest';
import { parseContentLength } from '../../src/modules/image/image-fetch.js';
import { progressUpdate } from '../../src/module-api/image-progress.js';
import { memoryVerdict } from '../../src/modules/image/image-qcow2.js';
import { displayUrl, planImage, urlSecrets } from '../../src/module-api/image-source.js';
import {
  curlRetryable,
  lastDdBytes,
  parseStreamOutput,
  STREAM_SCRIPT,
  streamArgv,
} from '../../src/modules/image/image-stream.js';
import { chooseEvictions } from '../../src/images/lru.js';
import { thrownBy } from '../helpers/thrown.js';

const H256 = 'a'.repeat(64);
const base = {
  source: 'https://img.example/os.raw',
  algo: 'sha256',
  hash: H256,
  format: undefined,
  allowMd5: false,
};

describe('planImage', () => {
  it('accepts an http(s) raw image with a sha256', () => {
    expect(planImage(base)).toEqual({
      kind: 'http',
      location: 'https://img.example/os.raw',
      format: 'raw',
      algo: 'sha256',
      hash: H256,
    });
  });
  it('guesses qcow2 from the URL and takes file:// as a controller path', () => {
    expect(planImage({ ...base, source: 'http://x/a.qcow2' }).format).toBe('qcow2');
    expect(planImage({ ...base, source: 'file:///srv/img/a.raw' })).toMatchObject({
      kind: 'file',
      location: '/srv/img/a.raw',
    });
  });
  it('requires a checksum of the right length and lower-cases it', () => {
    expect(() => planImage({ ...base, hash: undefined })).toThrow(/image_os_hash_value is required/);
    expect(() => planImage({ ...base, hash: 'abc' })).toThrow(/64 hex digits/);
    expect(planImage({ ...base, algo: 'sha512', hash: 'B'.repeat(128) }).hash).toBe('b'.repeat(128));
  });
  it('refuses md5 unless allowed', () => {
    const md5 = { ...base, algo: 'md5', hash: 'c'.repeat(32) };
    expect(() => planImage(md5)).toThrow(/md5 is refused/);
    expect(planImage({ ...md5, allowMd5: true }).algo).toBe('md5');
  });
  it('refuses oci://, unknown schemes, formats and URLs curl config cannot carry', () => {
    expect(() => planImage({ ...base, source: 'oci://quay.io/x:1' })).toThrow(/OCI reference/);
    expect(() => planImage({ ...base, source: 'ftp://x/y' })).toThrow(/not an http/);
    expect(() => planImage({ ...base, format: 'vmdk' })).toThrow(/vmdk/);
    expect(() => planImage({ ...base, source: 'http://x/a"b' })).toThrow(/quote/);
  });
  it('never echoes credentials of an unusable source', () => {
    const e = thrownBy(() => planImage({ ...base, source: 'ftp://user:hunter22@x/y' }));
    expect((e as Error).message).not.toContain('hunter22');
  });
});

describe('URL secrets', () => {
  it('registers passwords and whole URLs with credentials or a query', () => {
    expect(urlSecrets('https://u:p%40ss@h/x')).toEqual(
      expect.arrayContaining(['p@ss', 'https://u:p%40ss@h/x']),
    );
    expect(urlSecrets('https://h/x?sig=abc')).toContain('https://h/x?sig=abc');
    expect(urlSecrets('https://h/x')).toEqual([]);
    expect(displayUrl('https://u:p@h/x')).toBe('https://***@h/x');
  });
});

describe('stream script', () => {
  it('gets the URL from the environment, never from argv', () => {
    const argv = streamArgv({
      device: '/dev/sda',
      algo: 'sha512',
      workDir: '/tmp/w',
      directIo: true,
      tlsVerify: true,
      connectTimeoutS: 30,
    });
    expect(argv.slice(0, 4)).toEqual(['sh', '-c', STREAM_SCRIPT, 'sh']);
    expect(argv.slice(4)).toEqual(['/dev/sda', 'sha512sum', '/tmp/w', 'direct', '0', '30']);
    expect(STREAM_SCRIPT).toContain('"$TSBM_IMAGE_URL"');
    expect(STREAM_SCRIPT).toContain('conv=notrunc,fsync');
  });
  it('parses the summary line and dd progress', () => {
    const stderr =
      '1048576 bytes (1.0 MB, 1.0 MiB) copied, 1 s, 1 MB/s\r4194304 bytes (4.2 MB, 4.0 MiB) copied, 2 s\n1+0 records in\n';
    expect(parseStreamOutput(`TSBM_STREAM curl=0 dd=0 hashrc=0 hash=${H256}\n`, stderr)).toEqual({
      curlRc: 0,
      ddRc: 0,
      hashRc: 0,
      hash: H256,
      bytes: 4194304,
    });
    expect(parseStreamOutput('', '')).toBeUndefined();
    expect(lastDdBytes('0 bytes copied, 0.001 s')).toBe(0);
  });
  it('retries lost connections, not HTTP errors or write failures', () => {
    expect(curlRetryable(56)).toBe(true);
    expect(curlRetryable(18)).toBe(true);
    expect(curlRetryable(7)).toBe(true);
    expect(curlRetryable(22)).toBe(false);
    expect(curlRetryable(23)).toBe(false);
    expect(curlRetryable(0)).toBe(false);
  });
});

describe('sizes and memory', () => {
  it('takes the last Content-Length after redirects', () => {
    expect(
      parseContentLength(
        'HTTP/1.1 302 Found\r\ncontent-length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1234\r\n',
      ),
    ).toBe(1234);
    expect(parseContentLength('HTTP/1.1 200 OK\r\n')).toBeUndefined();
  });
  it('refuses a qcow2 that does not fit MemAvailable with margin, with numbers', () => {
    const meminfo = 'MemTotal: 4000000 kB\nMemAvailable: 2097152 kB\n';
    expect(memoryVerdict(1024 ** 3, meminfo).ok).toBe(true);
    const v = memoryVerdict(1.8 * 1024 ** 3, meminfo);
    expect(v.ok).toBe(false);
    expect(v.message).toContain('MemAvailable 2.0 GiB');
    expect(memoryVerdict(undefined, meminfo).ok).toBe(true);
  });
  it('reports bytes, rate and ETA', () => {
    const u = progressUpdate('writing /dev/sda', 50 * 1024 ** 2, 100 * 1024 ** 2, 5);
    expect(u).toMatchObject({ current: 50 * 1024 ** 2, total: 100 * 1024 ** 2, unit: 'bytes' });
    expect(u.message).toBe('writing /dev/sda, 10.0 MiB/s, ETA 5s');
  });
});

describe('LRU eviction', () => {
  const e = (file: string, size: number, usedMs: number) => ({ file, size, usedMs });
  it('evicts least recently used first until under the bound, skipping kept files', () => {
    const entries = [e('a', 40, 1), e('b', 40, 3), e('c', 40, 2), e('d', 40, 4)];
    expect(chooseEvictions(entries, 100, new Set()).map((x) => x.file)).toEqual(['a', 'c']);
    expect(chooseEvictions(entries, 100, new Set(['a'])).map((x) => x.file)).toEqual(['c', 'b']);
    expect(chooseEvictions(entries, 1000, new Set())).toEqual([]);
  });
});
