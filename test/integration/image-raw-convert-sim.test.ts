// Conversion to raw on the controller (force_raw_images) on the simulated lab: a qcow2 image with
// image_download_source: local is downloaded once, verified, converted once with qemu-img in
// the controller cache (its SHA-256 recorded beside it), and every node streams the raw image,
// verified on the stream. The nodes have less RAM than the qcow2 path needs, so a deploy that
// held the image in ramdisk memory would fail, and does with force_raw_images: false.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { buildGptImage, type ImageServer, imageDataSha, partitionDataSha, serveFiles, type TestImage } from '../helpers/image-fixture.js';
import { resultsOf, runEvents } from '../helpers/run-events.js';
import { scratchDirs } from '../helpers/scratch.js';

const PLAYBOOK = path.resolve(import.meta.dirname, '../../playbooks/deploy-image.yml');
const WRITE = 'Write the image to the root disk';
const scratch = scratchDirs();

let dir: string;
let lab: Lab;
let img: TestImage;
let server: ImageServer;
let md5: string;

beforeAll(async () => {
  dir = scratch('tsbm-raw-convert-');
  img = buildGptImage(dir, 48, true);
  md5 = createHash('md5').update(readFileSync(img.qcow2!)).digest('hex');
  server = await serveFiles([img.raw, img.qcow2!]);
  // 300 MiB of RAM: the qcow2 path needs the image plus 512 MiB headroom in the ramdisk.
  lab = await startLab({ nodes: 3, dir: path.join(dir, 'lab'), bootDelayMs: 200, powerDelayMs: 50, diskGiB: 2, memoryMiB: 300 });
}, 60_000);

afterAll(async () => {
  await lab?.close();
  await server?.close();
});

function inventory(name: string, info: Record<string, unknown>, vars: Record<string, unknown>): string {
  const doc = parse(readFileSync(lab.inventory, 'utf8')) as { all: { vars: Record<string, unknown> } };
  const base = doc.all.vars.instance_info as Record<string, unknown>;
  doc.all.vars.instance_info = { root_device: base.root_device, ...info };
  Object.assign(doc.all.vars, { agent_min_memory_mib: 128 }, vars);
  const file = path.join(dir, `${name}.yml`);
  writeFileSync(file, stringify(doc));
  return file;
}

const run = (inv: string) => runEvents({ playbook: PLAYBOOK, inventories: [inv] });


function zeroDisks(): void {
  for (const n of lab.nodes) {
    truncateSync(n.diskFile, 0);
    truncateSync(n.diskFile, 2 * 1024 ** 3);
  }
}

const qcow2Info = (hash: Record<string, unknown>) => ({
  image_source: `${server.url}/disk.qcow2`,
  image_disk_format: 'qcow2',
  ...hash,
});

describe('force_raw_images: conversion to raw on the controller', () => {
  it('without it, each ramdisk must hold the qcow2 in RAM: nodes with 300 MiB fail', async () => {
    zeroDisks();
    const { code, events } = await run(
      inventory('ramdisk-convert', qcow2Info({ image_os_hash_value: img.qcow2Sha256 }), {
        image_download_source: 'local',
        image_cache_dir: path.join(dir, 'cache-off'),
        force_raw_images: false,
      }),
    );
    expect(code).toBe(2);
    const w = resultsOf(events, WRITE);
    // Failed inside the deploy block, whose rescue powers the node off: counted rescued.
    expect(Object.values(w).map((r) => r.status)).toEqual(['rescued', 'rescued', 'rescued']);
    for (const r of Object.values(w)) expect(r.msg).toMatch(/does not fit in the ramdisk's memory/);
  }, 120_000);

  it('downloads once, converts once, and every node streams the raw image verified by its new SHA-256', async () => {
    zeroDisks();
    const cache = path.join(dir, 'cache');
    const before = server.downloads('disk.qcow2');
    const { code, events } = await run(
      inventory('convert', qcow2Info({ image_os_hash_value: img.qcow2Sha256 }), { image_download_source: 'local', image_cache_dir: cache }),
    );
    const w = resultsOf(events, WRITE);
    expect(Object.values(w).map((r) => r.status), JSON.stringify(w)).toEqual(['changed', 'changed', 'changed']);
    expect(code).toBe(0);
    // One upstream download for three nodes, one conversion.
    expect(server.downloads('disk.qcow2') - before).toBe(1);
    expect(Object.values(w).filter((r) => r.result.raw_converted === true)).toHaveLength(1);
    // The raw file and its recorded SHA-256 sit beside the source in the cache.
    const files = readdirSync(cache).sort();
    const raw = files.find((f) => f.startsWith('raw-of-') && f.endsWith('.img'))!;
    expect(files).toContain(`${raw}.sha256`);
    const recorded = readFileSync(path.join(cache, `${raw}.sha256`), 'utf8').split(' ')[0];
    expect(recorded).toBe(createHash('sha256').update(readFileSync(path.join(cache, raw))).digest('hex'));
    // qemu-img's raw of a qcow2 made from the raw image is that raw image, byte for byte.
    expect(recorded).toBe(img.sha256);
    for (const r of Object.values(w)) {
      expect(r.result.written_format).toBe('raw');
      expect(r.result.written_sha256).toBe(recorded);
      expect(r.msg).toMatch(/sha256 verified.*converted to raw on the controller/);
    }
    for (const n of lab.nodes) expect(partitionDataSha(n.diskFile, img)).toBe(imageDataSha(img));
  }, 120_000);

  it('a later run reuses the converted image; a raw file changed in the cache fails on the stream', async () => {
    zeroDisks();
    const cache = path.join(dir, 'cache');
    const before = server.downloads('disk.qcow2');
    const raw = readdirSync(cache).find((f) => f.startsWith('raw-of-') && f.endsWith('.img'))!;
    // Change one byte of the converted image inside the root partition, behind the cache's back.
    const fd = openSync(path.join(cache, raw), 'r+');
    writeSync(fd, Buffer.from('X'), 0, 1, 30 * 1024 * 1024);
    closeSync(fd);
    const { code, events } = await run(
      inventory('tampered', qcow2Info({ image_os_hash_value: img.qcow2Sha256 }), { image_download_source: 'local', image_cache_dir: cache }),
    );
    expect(code).toBe(2);
    expect(server.downloads('disk.qcow2') - before).toBe(0);
    const w = resultsOf(events, WRITE);
    for (const r of Object.values(w)) {
      expect(r.status).toBe('rescued');
      expect(r.msg).toMatch(/sha256 of .* is [0-9a-f]{64} but image_os_hash_value is/);
    }
  }, 120_000);

  it('an md5 source checksum is checked against the download, then only the raw SHA-256 counts', async () => {
    zeroDisks();
    const cache = path.join(dir, 'cache-md5');
    const wrong = await run(
      inventory('md5-wrong', qcow2Info({ image_os_hash_algo: 'md5', image_os_hash_value: '0'.repeat(32), image_allow_md5: true }), {
        image_download_source: 'local',
        image_cache_dir: cache,
      }),
    );
    expect(wrong.code).toBe(2);
    const failed = Object.values(resultsOf(wrong.events, WRITE));
    expect(failed.map((r) => r.status)).toEqual(['rescued', 'rescued', 'rescued']);
    for (const r of failed) expect(r.msg).toMatch(/md5 of the downloaded image is [0-9a-f]{32} but image_os_hash_value is 0{32}; nothing was cached/);
    expect(readdirSync(cache).filter((f) => f.startsWith('raw-of-'))).toEqual([]);

    const good = await run(
      inventory('md5', qcow2Info({ image_os_hash_algo: 'md5', image_os_hash_value: md5, image_allow_md5: true }), {
        image_download_source: 'local',
        image_cache_dir: cache,
      }),
    );
    const w = resultsOf(good.events, WRITE);
    expect(good.code, JSON.stringify(w)).toBe(0);
    for (const r of Object.values(w)) {
      expect(r.result.hash_algo).toBe('md5');
      expect(r.result.written_hash_algo).toBe('sha256');
      expect(r.result.written_sha256).toBe(img.sha256);
    }
    for (const n of lab.nodes) expect(partitionDataSha(n.diskFile, img)).toBe(imageDataSha(img));
  }, 120_000);
});
