// An inventory that says `tsbm_sim: {nodes: 3}` asks for a simulated lab for the length of one
// run: `tsbm run` starts it in a background process, runs against the inventory the lab
// writes, and stops it afterwards. One command does everything.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { PreparedInventories } from 'tsbm/lib/inventory/sim-lab.js';
import { simSpecOf } from 'tsbm/lib/inventory/sim-spec.js';
import { labDown, labUp } from './launcher.js';


/**
 * For `tsbm validate`, which starts nothing: each inventory with a `tsbm_sim` block is replaced
 * by the inventory its lab would write (same hosts and variables; ports 0, a placeholder key),
 * written under `tmpDir`.
 */
export async function previewSimInventories(paths: string[], tmpDir: string): Promise<string[]> {
  const out: string[] = [];
  for (const [i, p] of paths.entries()) {
    const spec = simSpecOf(p);
    if (!spec) {
      out.push(p);
      continue;
    }
    const { previewInventory } = await import('./lab.js');
    const file = join(tmpDir, `sim-preview-${i}.yml`);
    writeFileSync(file, previewInventory(join(tmpDir, `lab-${i}`), spec.nodes));
    out.push(file);
  }
  return out;
}

/** Starts a lab for every inventory with a `tsbm_sim` block and swaps in the lab's inventory. */
export async function startSimInventories(paths: string[]): Promise<PreparedInventories> {
  const started: string[] = [];
  const inventories: string[] = [];
  const stop = async () => {
    for (const d of started.splice(0)) await labDown(d).catch(() => undefined);
  };
  try {
    for (const p of paths) {
      const spec = simSpecOf(p);
      if (!spec) {
        inventories.push(p);
        continue;
      }
      const abs = resolve(p);
      const dir = spec.dir
        ? resolve(dirname(abs), spec.dir)
        : join('.tsbm', 'sim-auto', createHash('sha256').update(abs).digest('hex').slice(0, 12));
      await labDown(dir); // a lab left over from a killed run
      const rec = await labUp({
        dir,
        nodes: spec.nodes,
        mockups: spec.mockups ?? [],
        ...(spec.faults ? { faults: spec.faults } : {}),
        ...(spec.boot_delay_ms !== undefined ? { bootDelayMs: spec.boot_delay_ms } : {}),
        ...(spec.power_delay_ms !== undefined ? { powerDelayMs: spec.power_delay_ms } : {}),
        ...(spec.machines ? { machines: spec.machines } : {}),
      });
      started.push(dir);
      inventories.push(rec.inventory);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { inventories, stop };
}
