// deploy-image.yml end to end on the simulated lab: three nodes boot the ramdisk, stream a GPT
// image served by the test over HTTP (127.0.0.1), get a config drive, and boot from disk.
// Also: qcow2, a wrong checksum (host fails, no partition table left), and the controller
// cache (three nodes, one upstream download).
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultsOf, runEvents } from '../helpers/run-events.js';
import { readDiskLayout } from '../../packages/lab/src/lab/disk-layout.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import {
  buildGptImage,
  type ImageServer,
  MARKER,
  MARKER_OFFSET,
  partitionDataSha,
  imageDataSha,
  readAt,
  serveFiles,
  type TestImage,
} from '../helpers/image-fixture.js';

const PLAYBOOK = path.resolve(import.meta.dirname, '../../playbooks/deploy-image.yml');

let dir: string;
let lab: Lab;
let img: TestImage;
let server: ImageServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tsbm-image-sim-'));
  img = buildGptImage(dir, 48, true);
  server = await serveFiles([img.raw, img.qcow2!]);
  lab = await startLab({
    nodes: 3,
    dir: path.join(dir, 'lab'),
    bootDelayMs: 200,
    powerDelayMs: 50,
    diskGiB: 2,
  });
}, 60_000);

afterAll(async () => {
  await lab?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The lab's inventory with instance_info replaced for an image deploy. */
function inventory(
  name: string,
  info: Record<string, unknown>,
  vars: Record<string, unknown> = {},
  perHost: Record<string, Record<string, unknown>> = {},
): string {
  const doc = parse(readFileSync(lab.inventory, 'utf8')) as {
    all: {
      vars: Record<string, unknown>;
      children: { sim: { hosts: Record<string, Record<string, unknown>> } };
    };
  };
  const base = doc.all.vars.instance_info as Record<string, unknown>;
  doc.all.vars.instance_info = { root_device: base.root_device, configdrive: base.configdrive, ...info };
  Object.assign(doc.all.vars, vars);
  for (const [h, v] of Object.entries(perHost)) Object.assign(doc.all.children.sim.hosts[h]!, v);
  const file = path.join(dir, `${name}.yml`);
  writeFileSync(file, stringify(doc));
  return file;
}

const run = (inv: string) => runEvents({ playbook: PLAYBOOK, inventories: [inv] });


/** Fresh sparse disks, so a test sees only what its own run wrote. */
function zeroDisks(): void {
  for (const n of lab.nodes) {
    truncateSync(n.diskFile, 0);
    truncateSync(n.diskFile, 2 * 1024 ** 3);
  }
}

describe('deploy-image.yml on the simulated lab', () => {
  it('streams a raw GPT image to 3 nodes, adds the config drive, boots from disk', async () => {
    const { code, events } = await run(
      inventory('raw', {
        image_source: `${server.url}/disk.raw`,
        image_os_hash_algo: 'sha256',
        image_os_hash_value: img.sha256,
      }),
    );
    const written = resultsOf(events, 'Write the image to the root disk');
    expect(
      Object.values(written).map((r) => r.status),
      JSON.stringify(written),
    ).toEqual(['changed', 'changed', 'changed']);
    expect(code).toBe(0);
    for (const n of lab.nodes) {
      expect(partitionDataSha(n.diskFile, img)).toBe(imageDataSha(img));
      expect(readAt(n.diskFile, MARKER_OFFSET, MARKER.length).toString()).toBe(MARKER);
      const layout = await readDiskLayout(n.diskFile);
      expect(layout.partitions.map((p) => p.name)).toEqual(['esp', 'root', 'config-2']);
      // The config drive sits at the end of the 2 GiB disk, past the 48 MiB image (sgdisk -e worked).
      expect(layout.partitions[2]!.startBytes).toBeGreaterThan(1024 ** 3);
      expect(readAt(n.diskFile, layout.partitions[2]!.startBytes + 0x8001, 5).toString()).toBe('CD001');
    }
    expect(resultsOf(events, 'Write the config drive')[lab.nodes[0]!.cfg.name]?.status).toBe('changed');
    expect(server.downloads('disk.raw')).toBe(3);
    // The preflight asked once for the three nodes whether the URL answers.
    expect(server.probes('disk.raw')).toBe(1);
    expect(resultsOf(events, 'Check the node before touching it (BMC, image, ISO)')[lab.nodes[0]!.cfg.name]?.status).toBe('ok');
    const progress = events.filter((e) => e.type === 'progress');
    expect(progress.length).toBeGreaterThan(0);
  }, 120_000);

  it('a wrong checksum fails that host, powered off with media ejected and no partition table left; qcow2 deploys the same bytes', async () => {
    zeroDisks();
    const [a, b, c] = lab.nodes.map((n) => n.cfg.name);
    const inv = inventory(
      'mixed',
      { image_source: `${server.url}/disk.raw`, image_os_hash_value: img.sha256 },
      {},
      {
        [b!]: {
          instance_info: {
            root_device: { name: '/dev/vda' },
            image_source: `${server.url}/disk.raw`,
            image_os_hash_value: '0'.repeat(64),
          },
        },
        [c!]: {
          instance_info: {
            root_device: { name: '/dev/vda' },
            image_source: `${server.url}/disk.qcow2`,
            image_disk_format: 'qcow2',
            image_os_hash_algo: 'sha256',
            image_os_hash_value: img.qcow2Sha256,
          },
        },
      },
    );
    const { code, events } = await run(inv);
    const w = resultsOf(events, 'Write the image to the root disk');
    expect(w[a!]?.status).toBe('changed');
    expect(w[b!]?.status).toBe('rescued'); // the deploy's rescue cleans up, then fails the host
    expect(w[c!]?.status).toBe('changed');
    expect(code).toBe(2);
    const failure = JSON.stringify(events.filter((e) => e.type === 'host_result' && e.host === b));
    expect(failure).toContain(img.sha256);
    expect(failure).toContain('0'.repeat(64));
    const [na, nb, nc] = lab.nodes;
    expect((await readDiskLayout(nb!.diskFile)).table).toBe('none');
    // Cleaned up after the failure, still failed, and the last message says so.
    const last = events.filter((e) => e.type === 'host_result' && e.host === b && e.status === 'failed').at(-1);
    expect(last?.type === 'host_result' && last.msg).toMatch(
      /node powered off, virtual media ejected \(on_deploy_failure: power_off\) after "Write the image to the root disk" failed: .*checksum/s,
    );
    expect(nb!.bmc!.state.powerState).toBe('Off');
    expect(nb!.bmc!.state.cdSlots().some((x) => x.Inserted === true)).toBe(false);
    expect(na!.bmc!.state.powerState).toBe('On');
    expect(partitionDataSha(nc!.diskFile, img)).toBe(partitionDataSha(na!.diskFile, img));
    expect(readAt(nc!.diskFile, MARKER_OFFSET, MARKER.length).toString()).toBe(MARKER);
  }, 120_000);

  it('image_download_source: local downloads once on the controller for all three nodes', async () => {
    zeroDisks();
    const before = server.downloads('disk.raw');
    const { code, events } = await run(
      inventory(
        'local',
        { image_source: `${server.url}/disk.raw`, image_os_hash_value: img.sha256 },
        { image_download_source: 'local', image_cache_dir: path.join(dir, 'cache') },
      ),
    );
    const w = resultsOf(events, 'Write the image to the root disk');
    expect(
      Object.values(w).map((r) => r.status),
      JSON.stringify(w),
    ).toEqual(['changed', 'changed', 'changed']);
    expect(code).toBe(0);
    expect(server.downloads('disk.raw') - before).toBe(1);
    expect(Object.values(w).filter((r) => r.result.cache_downloaded === true)).toHaveLength(1);
    for (const n of lab.nodes) expect(partitionDataSha(n.diskFile, img)).toBe(imageDataSha(img));
  }, 120_000);

  it('a raw stream that loses its connection restarts from the beginning and still verifies', async () => {
    zeroDisks();
    server.dropAfter(5 * 1024 * 1024, 1);
    const { code, events } = await run(
      inventory('drop', { image_source: `${server.url}/disk.raw`, image_os_hash_value: img.sha256 }),
    );
    const w = resultsOf(events, 'Write the image to the root disk');
    expect(code, JSON.stringify(w)).toBe(0);
    expect(
      Object.values(w)
        .map((r) => r.result.attempts as number)
        .sort(),
    ).toEqual([1, 1, 2]);
    expect(
      events.some(
        (e) =>
          e.type === 'retry' || (e.type === 'log' && JSON.stringify(e).includes('restarting the stream')),
      ),
    ).toBe(true);
    for (const n of lab.nodes) expect(partitionDataSha(n.diskFile, img)).toBe(imageDataSha(img));
  }, 120_000);
});
