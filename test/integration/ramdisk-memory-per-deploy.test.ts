// The ramdisk's memory threshold depends on the deploy (agent_min_memory_mib_for in the
// wait-agent role): an image deploy streams the image to disk and works on a 1 GiB ramdisk; a
// bootc deploy keeps the image on the ramdisk's tmpfs and refuses the same node, naming the
// inventory variable to change (not only the module argument).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { buildGptImage, type ImageServer, imageDeployInventory, serveFiles, type TestImage } from '../helpers/image-fixture.js';
import { resultsOf, runEvents } from '../helpers/run-events.js';

const PLAYBOOKS = path.resolve(import.meta.dirname, '../../playbooks');
const WAIT = 'Wait for the ramdisk and check it is this node';

let dir: string;
let lab: Lab;
let img: TestImage;
let server: ImageServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tsbm-mem-'));
  img = buildGptImage(dir, 32);
  server = await serveFiles([img.raw]);
  // A 1 GiB node: the simulated ramdisk reports MemAvailable 1000 MiB.
  lab = await startLab({ nodes: 1, dir: path.join(dir, 'lab'), bootDelayMs: 150, powerDelayMs: 30, diskGiB: 2, memoryMiB: 1024 });
}, 60_000);

afterAll(async () => {
  await lab?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('memory thresholds per deploy kind, on a 1 GiB ramdisk', () => {
  it('deploy-image.yml works: the image streams, 256 MiB are asked for', async () => {
    const { code, events } = await runEvents({ playbook: path.join(PLAYBOOKS, 'deploy-image.yml'), inventories: [imageDeployInventory(lab.inventory, path.join(dir, 'image.yml'), `${server.url}/disk.raw`, img.sha256)] });
    const wait = resultsOf(events, WAIT).node01;
    expect(wait?.status, wait?.msg).toBe('ok');
    expect(wait?.result.mem_available_mib).toBe(1000);
    expect(resultsOf(events, 'Write the image to the root disk').node01?.status).toBe('changed');
    expect(code).toBe(0);
  }, 120_000);

  it('deploy-bootc.yml refuses the node before touching its disk, naming agent_min_memory_mib', async () => {
    const { code, events } = await runEvents({ playbook: path.join(PLAYBOOKS, 'deploy-bootc.yml'), inventories: [lab.inventory] });
    const wait = resultsOf(events, WAIT).node01;
    expect(wait?.status).toBe('rescued'); // the deploy's rescue powers the node off
    expect(wait?.msg).toMatch(/the ramdisk has 1000 MiB available, 2048 MiB needed/);
    expect(JSON.stringify(wait?.result)).toMatch(/lower the threshold: agent_min_memory_mib in the inventory/);
    expect(code).toBe(2);
  }, 120_000);
});
