// The inspector on a controller file (a file:// image source, a cached download): its first
// HEADER_BYTES, read without following anything the image names.
import { open } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { inspectImage } from './detect.js';
import { HEADER_BYTES, type Inspection } from './types.js';
import { judgeImage, type Verdict, type VerdictInput } from './verdict.js';

export async function readHeader(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(HEADER_BYTES);
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

export async function inspectFile(file: string): Promise<Inspection> {
  return inspectImage(await readHeader(file));
}

/** The verdict on a controller file; a relative path resolves against `baseDir` (the playbook's). */
export async function inspectLocalImage(file: string, baseDir: string, v: VerdictInput): Promise<Verdict> {
  return judgeImage(await inspectFile(isAbsolute(file) ? file : resolve(baseDir, file)), v);
}
