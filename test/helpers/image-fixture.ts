// Test fixtures for image deploys: a small GPT disk image with a marker written by offset, and
// an HTTP server (byte ranges, a request log, an optional dropped connection) that serves it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { basename, join } from 'node:path';
import { parse, stringify } from 'yaml';

export const MARKER = 'TSBM-IMAGE-MARKER-7f3a';
/** Byte offset of the marker: inside partition 2. */
export const MARKER_OFFSET = 20 * 1024 * 1024 + 4096;

export interface TestImage {
  raw: string;
  sha256: string;
  sha512: string;
  size: number;
  qcow2?: string;
  qcow2Sha256?: string;
}

export function sha(file: string, algo = 'sha256'): string {
  return createHash(algo).update(readFileSync(file)).digest('hex');
}

/** A `sizeMiB` raw GPT image: an ESP and a root partition, a marker inside root. */
export function buildGptImage(dir: string, sizeMiB = 48, qcow2 = false): TestImage {
  const raw = join(dir, 'disk.raw');
  execFileSync('truncate', ['-s', `${sizeMiB}M`, raw]);
  execFileSync(
    'sgdisk',
    ['-n', '1:2048:+16M', '-t', '1:ef00', '-c', '1:esp', '-n', '2:0:0', '-c', '2:root', raw],
    { stdio: 'ignore' },
  );
  const fd = openSync(raw, 'r+');
  writeSync(fd, Buffer.from(MARKER), 0, MARKER.length, MARKER_OFFSET);
  closeSync(fd);
  const img: TestImage = { raw, sha256: sha(raw), sha512: sha(raw, 'sha512'), size: statSync(raw).size };
  if (qcow2) {
    img.qcow2 = join(dir, 'disk.qcow2');
    execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, img.qcow2]);
    img.qcow2Sha256 = sha(img.qcow2);
  }
  return img;
}

/** Reads `len` bytes at `offset` of a file (a disk). */
export function readAt(file: string, offset: number, len: number): Buffer {
  const fd = openSync(file, 'r');
  const b = Buffer.alloc(len);
  try {
    readSync(fd, b, 0, len, offset);
  } finally {
    closeSync(fd);
  }
  return b;
}

/** SHA-256 of the image's partition data as found on a disk (GPT headers change with sgdisk -e). */
export function partitionDataSha(file: string, img: TestImage): string {
  const start = 2048 * 512;
  const end = img.size - 34 * 512;
  return createHash('sha256')
    .update(readAt(file, start, end - start))
    .digest('hex');
}

export function imageDataSha(img: TestImage): string {
  return partitionDataSha(img.raw, img);
}

export interface ImageServer {
  url: string;
  /** One line per request: "METHOD path range status". */
  log: string[];
  /** GETs of the whole file or of its rest from an offset (not HEAD, not one-byte probes, not first looks). */
  downloads(name?: string): number;
  /** GETs of the first bytes (`Range: bytes=0-N`, N > 0): the image inspector's first look from a ramdisk. */
  firstLooks(name?: string): number;
  /** GETs of the first byte only (`Range: bytes=0-0`: the controller's preflight asking whether the URL answers). */
  probes(name?: string): number;
  /** Drop the connection after this many bytes on the next N GETs. */
  dropAfter(bytes: number, times?: number): void;
  close(): Promise<void>;
}

export async function serveFiles(files: string[], host = '127.0.0.1'): Promise<ImageServer> {
  const byName = new Map(files.map((f) => [`/${basename(f)}`, f]));
  const log: string[] = [];
  const sockets = new Set<Socket>();
  let drop: { bytes: number; times: number } | undefined;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const file = byName.get(path);
    if (!file) {
      log.push(`${req.method} ${path} - 404`);
      res.writeHead(404).end();
      return;
    }
    const size = statSync(file).size;
    if (req.headers.range === 'bytes=0-0') {
      log.push(`${req.method} ${path} 0-0 206`);
      res.writeHead(206, { 'Content-Length': '1', 'Content-Range': `bytes 0-0/${size}`, 'Accept-Ranges': 'bytes' });
      res.end(req.method === 'HEAD' ? undefined : readAt(file, 0, 1));
      return;
    }
    const head = /^bytes=0-(\d+)$/.exec(req.headers.range ?? '');
    if (head) {
      // The image inspector's first look (image_write on a ramdisk): the first bytes only.
      const end = Math.min(Number(head[1]), size - 1);
      log.push(`${req.method} ${path} 0-${head[1]} 206`);
      res.writeHead(206, { 'Content-Length': String(end + 1), 'Content-Range': `bytes 0-${end}/${size}`, 'Accept-Ranges': 'bytes' });
      res.end(req.method === 'HEAD' ? undefined : readAt(file, 0, end + 1));
      return;
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const status = m ? 206 : 200;
    log.push(`${req.method} ${path} ${m ? `${start}-` : '-'} ${status}`);
    res.writeHead(status, {
      'Content-Length': String(size - start),
      'Accept-Ranges': 'bytes',
      ...(m ? { 'Content-Range': `bytes ${start}-${size - 1}/${size}` } : {}),
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    if (drop && drop.times > 0) {
      drop.times--;
      const cut = Math.min(size - 1, start + drop.bytes);
      const s = createReadStream(file, { start, end: cut - 1 });
      s.on('data', (c) => res.write(c));
      s.on('end', () => res.socket?.destroy());
      return;
    }
    createReadStream(file, { start }).pipe(res);
  };
  const server: Server = createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, host, () => ok()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    log,
    downloads: (name) => log.filter((l) => l.startsWith('GET') && !/ 0-\d+ 206$/.test(l) && (!name || l.includes(`/${name} `))).length,
    firstLooks: (name) => log.filter((l) => l.startsWith('GET') && / 0-[1-9]\d* 206$/.test(l) && (!name || l.includes(`/${name} `))).length,
    probes: (name) => log.filter((l) => l.startsWith('GET') && l.includes(' 0-0 ') && (!name || l.includes(`/${name} `))).length,
    dropAfter(bytes, times = 1) {
      drop = { bytes, times };
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/**
 * A copy of a lab inventory (`from`) whose instance_info deploys `url` as a raw image with its
 * SHA-256, keeping the lab's root device hint and config drive; written to `file`.
 */
export function imageDeployInventory(from: string, file: string, url: string, sha256: string): string {
  const doc = parse(readFileSync(from, 'utf8')) as { all: { vars: Record<string, unknown> } };
  const base = doc.all.vars.instance_info as Record<string, unknown>;
  doc.all.vars.instance_info = { root_device: base.root_device, configdrive: base.configdrive, image_source: url, image_os_hash_algo: 'sha256', image_os_hash_value: sha256 };
  writeFileSync(file, stringify(doc));
  return file;
}
