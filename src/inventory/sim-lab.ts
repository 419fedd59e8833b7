// The simulated lab is a package of its own (packages/lab, `@tsbm/lab`, shipped inside tsbm's):
// tsbm loads it only when a command needs it (`tsbm sim`, an inventory with a `tsbm_sim` block),
// through this interface, which the lab implements (its index checks so with `satisfies`). The
// lab builds on tsbm's libraries (`tsbm/lib/...`), so tsbm never imports it by path: one
// direction at compile time, and the name resolved only at run time.
import { TsbmError } from '../errors.js';

/** What `tsbm sim up` and a `tsbm_sim` inventory ask a lab for. */
export interface SimLabOptions {
  dir: string;
  nodes: number;
  mockups: string[];
  faults?: string;
  bootDelayMs?: number;
  powerDelayMs?: number;
  /** `sim` (default): simulated nodes; `qemu`: QEMU virtual machines with UEFI firmware. */
  machines?: 'sim' | 'qemu';
}

/** A running lab, as its background process records it (lab.json in its directory). */
export interface SimLabRecord {
  pid: number;
  controlUrl: string;
  inventory: string;
  nodes: number;
  started: number;
}

/** Inventories with their `tsbm_sim` blocks replaced by the inventories of the labs started for them. */
export interface PreparedInventories {
  inventories: string[];
  stop(): Promise<void>;
}

export interface SimLab {
  /** Starts a lab in a background process of its own and returns once it serves. */
  labUp(o: SimLabOptions): Promise<SimLabRecord>;
  /** Stops the lab running in `dir`; false when none was. */
  labDown(dir: string): Promise<boolean>;
  /** One row per node: power, boot override, media, disk, installer. */
  labStatus(dir: string): Promise<Record<string, unknown>[]>;
  /** A lab for every inventory with a `tsbm_sim` block, for the length of one run. */
  startSimInventories(paths: string[]): Promise<PreparedInventories>;
  /** For `tsbm validate`: the inventories those labs would write, starting nothing. */
  previewSimInventories(paths: string[], tmpDir: string): Promise<string[]>;
}

// A string, not a literal in import(): the compiler must not resolve the lab (it builds after tsbm).
const LAB_PACKAGE: string = '@tsbm/lab';

/** The simulated lab package, loaded on first use. */
export async function loadSimLab(): Promise<SimLab> {
  try {
    return ((await import(LAB_PACKAGE)) as { simLab: SimLab }).simLab;
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String((e as Error).message).includes(LAB_PACKAGE)) {
      throw new TsbmError('options', `the simulated lab (package ${LAB_PACKAGE}) is not installed beside tsbm`, {
        hint: `install tsbm from its package (the lab ships inside it), or \`npm install ${LAB_PACKAGE}\``,
      });
    }
    throw e;
  }
}
