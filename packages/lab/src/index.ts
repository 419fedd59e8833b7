// @tsbm/lab: the simulated lab (fake Redfish BMCs, ramdisks over SSH, a registry, an installer),
// tsbm's test bed and `tsbm sim`. What tsbm asks of it (src/inventory/sim-lab.ts), in one object.
import type { SimLab } from 'tsbm/lib/inventory/sim-lab.js';
import { previewSimInventories, startSimInventories } from './lab/auto.js';
import { labDown, labStatus, labUp } from './lab/launcher.js';

export const simLab = { labUp, labDown, labStatus, startSimInventories, previewSimInventories } satisfies SimLab;
