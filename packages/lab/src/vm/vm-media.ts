// Virtual media for a lab VM: the BMC holds a URL, QEMU's CD drive needs a file. A file: URL is
// used in place; http(s) is downloaded (as a BMC streams it) into the node's directory, fresh at
// every insert, so a rebuilt ISO at the same URL is the one that boots.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

export async function localMedium(url: string, dir: string): Promise<string> {
  if (url.startsWith('file:')) return fileURLToPath(url);
  if (url.startsWith('/')) return url;
  if (!/^https?:/i.test(url)) throw new Error(`virtual media ${url}: the lab's VMs read file:, http: and https: URLs`);
  const file = join(dir, `media-${createHash('sha256').update(url).digest('hex').slice(0, 16)}.iso`);
  const tmp = `${file}.part`;
  const res = await fetch(url);
  if (!res.ok || !res.body) throw new Error(`virtual media ${url}: HTTP ${res.status}`);
  try {
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), createWriteStream(tmp));
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw new Error(`virtual media ${url}: ${(e as Error).message}`);
  }
  return file;
}
