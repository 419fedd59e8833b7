// An inventory that says `tsbm_sim: {nodes: 3}` asks for a simulated lab for the length of one
// run (packages/lab/src/lab/auto.ts starts it). This is the one place that recognises such an inventory:
// `tsbm run` asks it whether to start a lab, `tsbm validate` whether the hosts are known yet.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { TsbmError } from '../errors.js';

export interface SimSpec {
  nodes: number;
  mockups?: string[];
  faults?: string;
  boot_delay_ms?: number;
  power_delay_ms?: number;
  /** sim (default) or qemu: the nodes are QEMU virtual machines with UEFI firmware. */
  machines?: 'sim' | 'qemu';
  dir?: string;
}

/** The `tsbm_sim` block of an inventory file, when it has one. */
export function simSpecOf(path: string): SimSpec | undefined {
  let text: string;
  let doc: unknown;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined; // a directory or an unreadable file: the inventory loader reports it properly
  }
  // Most inventories do not mention it: skip parsing them a second time (a fleet's is large).
  if (!text.includes('tsbm_sim')) return undefined;
  try {
    doc = parse(text);
  } catch {
    return undefined; // not readable YAML: the inventory loader reports it properly
  }
  if (!doc || typeof doc !== 'object' || !('tsbm_sim' in doc)) return undefined;
  const spec = (doc as { tsbm_sim: unknown }).tsbm_sim;
  const nodes = (spec as { nodes?: unknown } | null)?.nodes;
  if (!spec || typeof spec !== 'object' || !Number.isInteger(nodes) || (nodes as number) < 1) {
    throw new TsbmError('parse', `${path}: tsbm_sim needs "nodes:" with a whole number of nodes`, {
      hint: 'e.g. tsbm_sim: {nodes: 3}',
    });
  }
  const machines = (spec as { machines?: unknown }).machines;
  if (machines !== undefined && machines !== 'sim' && machines !== 'qemu') {
    throw new TsbmError('parse', `${path}: tsbm_sim.machines must be sim or qemu, got ${JSON.stringify(machines)}`, { hint: 'e.g. tsbm_sim: {nodes: 2, machines: qemu}' });
  }
  return spec as SimSpec;
}
