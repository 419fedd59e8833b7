// Hostile and mis-declared images through deploy-image.yml on the simulated lab: three qcow2
// images made by the real qemu-img that point at a controller file (a backing file, an external
// data file, a json: backing specification), served as file:// sources (the controller inspects
// them) and over HTTP (the ramdisk's first look, then the downloaded file); a qcow2 named *.img
// with no image_disk_format; a qcow2 whose virtual size is over tsbm_max_image_virtual. Each
// hostile node fails naming the reason, and no byte of the controller file reaches its disk.
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TsbmEvent } from '../../src/output/events.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { type HostileImage, hostileQcow2s, SECRET_MARKER, SECRET_OFFSET, sizeBomb } from '../helpers/hostile-images.js';
import { buildGptImage, type ImageServer, MARKER, MARKER_OFFSET, readAt, serveFiles, sha, type TestImage } from '../helpers/image-fixture.js';
import { resultsOf, runEvents } from '../helpers/run-events.js';

const PLAYBOOK = path.resolve(import.meta.dirname, '../../playbooks/deploy-image.yml');
const WRITE = 'Write the image to the root disk';
const PREFLIGHT = 'Check the node before touching it (BMC, image, ISO)';

let dir: string;
let lab: Lab;
let hostile: HostileImage[];
let img: TestImage;
let misnamed: { file: string; sha256: string };
let server: ImageServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tsbm-hostile-sim-'));
  hostile = hostileQcow2s(dir);
  img = buildGptImage(dir, 48, true);
  // The qcow2 under a raw-looking name: tsbm guessed raw from `.img` and wrote its bytes as they were.
  misnamed = { file: path.join(dir, 'disk.img'), sha256: img.qcow2Sha256! };
  writeFileSync(misnamed.file, readFileSync(img.qcow2!));
  server = await serveFiles([...hostile.map((h) => h.file), misnamed.file]);
  lab = await startLab({ nodes: 3, dir: path.join(dir, 'lab'), bootDelayMs: 200, powerDelayMs: 50, diskGiB: 2 });
}, 60_000);

afterAll(async () => {
  await lab?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The lab's inventory with each host's instance_info (root device hint kept) and extra vars. */
function inventory(name: string, perHost: Array<Record<string, unknown>>, vars: Record<string, unknown> = {}): string {
  const doc = parse(readFileSync(lab.inventory, 'utf8')) as {
    all: { vars: Record<string, unknown>; children: { sim: { hosts: Record<string, Record<string, unknown>> } } };
  };
  const base = doc.all.vars.instance_info as Record<string, unknown>;
  // The test's images live in its temp directory (docs/security.md: file_url_allowed_paths).
  Object.assign(doc.all.vars, { tsbm_file_url_allowed_paths: [dir] }, vars);
  lab.nodes.forEach((n, i) => {
    doc.all.children.sim.hosts[n.cfg.name]!.instance_info = { root_device: base.root_device, ...perHost[i % perHost.length] };
  });
  const file = path.join(dir, `${name}.yml`);
  writeFileSync(file, stringify(doc));
  return file;
}

function freshDisks(): void {
  for (const n of lab.nodes) {
    truncateSync(n.diskFile, 0);
    truncateSync(n.diskFile, 2 * 1024 ** 3);
  }
}

/** Everything the run said about one host, as one string. */
const said = (events: TsbmEvent[], host: string) => JSON.stringify(events.filter((e) => e.type === 'host_result' && e.host === host));

/** `at`: the task that refuses the image (the preflight for a controller file, else the write, whose rescue cleans up). */
function expectRefused(code: number, events: TsbmEvent[], reasons: Record<HostileImage['kind'], RegExp>, at: 'preflight' | 'write' = 'write'): void {
  const w = resultsOf(events, WRITE);
  const pre = resultsOf(events, PREFLIGHT);
  expect(code).toBe(2);
  lab.nodes.forEach((n, i) => {
    const h = hostile[i]!;
    if (at === 'write') expect(w[n.cfg.name]?.status, `${h.kind}: ${JSON.stringify(w[n.cfg.name])}`).toBe('rescued');
    else {
      expect(pre[n.cfg.name]?.status, `${h.kind}: ${JSON.stringify(pre[n.cfg.name])}`).toBe('failed');
      expect(w[n.cfg.name], 'the write never ran').toBeUndefined();
    }
    expect(said(events, n.cfg.name), h.kind).toMatch(reasons[h.kind]);
    // No byte of the controller file on the node's disk: where it would be, nor anywhere in the first 16 MiB.
    expect(readAt(n.diskFile, SECRET_OFFSET, SECRET_MARKER.length).toString()).not.toBe(SECRET_MARKER);
    expect(readAt(n.diskFile, 0, 16 * 1024 * 1024).includes(SECRET_MARKER)).toBe(false);
    expect(n.bmc!.state.powerState).toBe('Off');
  });
}

const REASONS: Record<HostileImage['kind'], RegExp> = {
  backing: /is refused: the image is qcow2 \(8 MiB virtual\); it names a backing file \\"[^"]*secret-backing\.raw/,
  data_file: /is refused: the image is qcow2 \(8 MiB virtual\); it keeps its data in an external data file; it names an external data file \\"[^"]*secret-data\.raw/,
  json: /is refused: the image is qcow2 \(8 MiB virtual\); it names a backing file given as a json: specification/,
};

describe('hostile qcow2 images through deploy-image.yml', () => {
  it('file:// sources: the preflight inspects each on the controller; each node fails naming what the image names, untouched', async () => {
    freshDisks();
    const inv = inventory(
      'hostile-file',
      hostile.map((h) => ({ image_source: `file://${h.file}`, image_disk_format: 'qcow2', image_os_hash_value: h.sha256 })),
    );
    const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [inv] });
    expectRefused(code, events, REASONS, 'preflight');
  }, 120_000);

  it('http sources (the ramdisk fetches them): refused from the first bytes the ramdisk reads, nothing downloaded whole', async () => {
    freshDisks();
    const before = hostile.map((h) => server.downloads(path.basename(h.file)));
    const inv = inventory(
      'hostile-http',
      hostile.map((h) => ({ image_source: `${server.url}/${path.basename(h.file)}`, image_disk_format: 'qcow2', image_os_hash_value: h.sha256 })),
    );
    const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [inv] });
    expectRefused(code, events, REASONS);
    // One first look each (the ramdisk's Range request), no download to convert.
    expect(hostile.map((h, i) => server.downloads(path.basename(h.file)) - before[i]!)).toEqual([0, 0, 0]);
    expect(hostile.map((h) => server.firstLooks(path.basename(h.file)))).toEqual([1, 1, 1]);
  }, 120_000);

  it('declared raw, a hostile qcow2 is refused as the wrong format, and it names what the image names', async () => {
    freshDisks();
    const inv = inventory(
      'hostile-raw',
      hostile.map((h) => ({ image_source: `${server.url}/${path.basename(h.file)}`, image_disk_format: 'raw', image_os_hash_value: h.sha256 })),
    );
    const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [inv] });
    expectRefused(code, events, {
      backing: /image_disk_format says raw, but the image is qcow2 .*names a backing file/,
      data_file: /image_disk_format says raw, but the image is qcow2 .*external data file/,
      json: /image_disk_format says raw, but the image is qcow2 .*json: specification/,
    });
  }, 120_000);

  it('a server that shows a clean qcow2 to the first look and sends a hostile one: refused on the ramdisk after the download, before qemu-img converts', async () => {
    freshDisks();
    const clean = readFileSync(img.qcow2!);
    const evil = hostile[0]!;
    const two = await twoFacedServer(clean, readFileSync(evil.file));
    try {
      const inv = inventory('two-faced', [{ image_source: `${two.url}/os.qcow2`, image_disk_format: 'qcow2', image_os_hash_value: evil.sha256 }]);
      const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [inv] });
      expect(code).toBe(2);
      for (const n of lab.nodes) {
        expect(said(events, n.cfg.name)).toMatch(/is refused: the image is qcow2 \(8 MiB virtual\); it names a backing file .*secret-backing\.raw.*was not touched/);
        expect(readAt(n.diskFile, 0, 16 * 1024 * 1024).includes(SECRET_MARKER)).toBe(false);
      }
      expect(two.gets()).toEqual({ ranged: 3, whole: 3 });
    } finally {
      await two.close();
    }
  }, 120_000);
});

/** Answers a Range request with `first`'s bytes and a whole GET with `then`'s. */
async function twoFacedServer(first: Buffer, then: Buffer): Promise<{ url: string; gets(): { ranged: number; whole: number }; close(): Promise<void> }> {
  let ranged = 0;
  let whole = 0;
  const srv = createServer((req, res) => {
    if (req.method === 'HEAD') return void res.writeHead(200, { 'Content-Length': String(then.length) }).end();
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (range && range[1] === '0' && range[2]) {
      if (range[2] !== '0') ranged++; // not the preflight's one-byte probe
      const end = Math.min(Number(range[2]), first.length - 1);
      res.writeHead(206, { 'Content-Range': `bytes 0-${end}/${first.length}`, 'Content-Length': String(end + 1) }).end(first.subarray(0, end + 1));
      return;
    }
    whole++;
    const from = range ? Number(range[1]) : 0;
    res.writeHead(range ? 206 : 200, { 'Content-Length': String(then.length - from) }).end(then.subarray(from));
  });
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    gets: () => ({ ranged, whole }),
    close: () => new Promise<void>((ok) => srv.close(() => ok())),
  };
}

describe('the content decides the format', () => {
  it('a qcow2 named disk.img without image_disk_format is converted, not written as qcow2 bytes (http, file:// and the controller cache)', async () => {
    freshDisks();
    const inv = inventory('misnamed', [
      { image_source: `${server.url}/disk.img`, image_os_hash_value: misnamed.sha256 },
      { image_source: `file://${misnamed.file}`, image_os_hash_value: misnamed.sha256 },
      { image_source: `${server.url}/disk.img`, image_os_hash_value: misnamed.sha256, image_download_source: 'local' },
    ], { image_cache_dir: path.join(dir, 'cache') });
    const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [inv] });
    const w = resultsOf(events, WRITE);
    expect(code, JSON.stringify(w)).toBe(0);
    for (const n of lab.nodes) {
      expect(w[n.cfg.name]?.result.disk_format).toBe('qcow2');
      expect(readAt(n.diskFile, MARKER_OFFSET, MARKER.length).toString()).toBe(MARKER);
      expect(readAt(n.diskFile, 0, 4).toString('latin1')).not.toBe('QFI\xfb');
    }
    expect(w[lab.nodes[2]!.cfg.name]?.result.raw_converted).toBe(true);
  }, 120_000);

  it('a size bomb (a few KiB of qcow2 declaring 4 GiB) is refused within tsbm_max_image_virtual, on the ramdisk and on the controller', async () => {
    freshDisks();
    const bomb = sizeBomb(dir, '4G');
    const bombServer = await serveFiles([bomb.file]);
    try {
      const url = `${bombServer.url}/bomb.qcow2`;
      const inv = inventory(
        'bomb',
        [
          { image_source: url, image_os_hash_value: bomb.sha256 },
          { image_source: `file://${bomb.file}`, image_os_hash_value: bomb.sha256 },
          { image_source: url, image_os_hash_value: bomb.sha256, image_download_source: 'local' },
        ],
        { tsbm_max_image_virtual: '1GiB', image_cache_dir: path.join(dir, 'cache-bomb') },
      );
      const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [inv] });
      expect(code).toBe(2);
      for (const n of lab.nodes) {
        expect(said(events, n.cfg.name)).toMatch(/is refused: its virtual size 4 GiB is over tsbm_max_image_virtual \(1 GiB\)/);
        expect(readAt(n.diskFile, 0, 1024 * 1024).every((x) => x === 0)).toBe(true);
      }
      expect(sha(bomb.file)).toBe(bomb.sha256);
    } finally {
      await bombServer.close();
    }
  }, 120_000);
});

describe('controller files that inventory data names', () => {
  // As Ironic's file_url_allowed_paths: a file:// source outside the documented directories (and
  // those tsbm_file_url_allowed_paths adds) is refused by the preflight, whatever preflight_skip
  // says; nothing is served, nothing touched. The controller's own files stay on it.
  it('a file:// image outside the allowed directories fails the node in the preflight, naming the file and the directories', async () => {
    freshDisks();
    const secret = path.join(dir, 'lab', 'inventory.yml');
    const inv = inventory('outside', [{ image_source: `file://${misnamed.file}`, image_os_hash_value: misnamed.sha256 }, { image_source: `file://${secret}`, image_disk_format: 'raw', image_os_hash_value: 'a'.repeat(64) }], {
      tsbm_file_url_allowed_paths: [],
      preflight_skip: ['image_url'],
    });
    const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [inv] });
    expect(code).toBe(2);
    const pre = resultsOf(events, PREFLIGHT);
    lab.nodes.forEach((n, i) => {
      expect(pre[n.cfg.name]?.status).toBe('failed');
      const file = i % 2 === 0 ? misnamed.file : secret;
      expect(said(events, n.cfg.name)).toContain(`image_source: ${file} is not in a directory files may be named from (/var/lib/tsbm, /srv/tsbm)`);
      expect(resultsOf(events, WRITE)[n.cfg.name]).toBeUndefined();
      expect(readAt(n.diskFile, 0, 1024 * 1024).every((x) => x === 0)).toBe(true);
    });
  }, 120_000);
});
