// A one-node simulated lab for the secret tests, with its inventory parsed for editing: the lab's
// BMC password and pull secret are real, so a deploy only works if they arrive where tsbm sends them.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';

export interface LabInventory {
  all: { vars: { instance_info: Record<string, unknown> } & Record<string, unknown>; children: { sim: { hosts: Record<string, Record<string, unknown>> } } };
}

export interface SecretLab {
  lab: Lab;
  /** The temp dir holding the lab (lab/) and the runs' working dir (work/). */
  root: string;
  work: string;
  inventory: LabInventory;
  /** node01's host vars and driver_info, to be edited before the inventory is written. */
  node: Record<string, unknown>;
  driverInfo: Record<string, unknown>;
}

export async function startSecretLab(prefix: string): Promise<SecretLab> {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const lab = await startLab({ nodes: 1, dir: join(root, 'lab'), bootDelayMs: 200, powerDelayMs: 20 });
  const work = join(root, 'work');
  mkdirSync(work);
  const inventory = parse(readFileSync(lab.inventory, 'utf8')) as LabInventory;
  const node = inventory.all.children.sim.hosts.node01!;
  return { lab, root, work, inventory, node, driverInfo: node.driver_info as Record<string, unknown> };
}
