// `tsbm sim up --faults SPEC`: which simulated node misbehaves how.
// SPEC is `;`-separated entries `SELECTOR:fault[=value],fault...` where SELECTOR is a node name
// (node02), a 1-based index (2), `*` for every node, or `every:N` for every Nth node.
// Faults: bmc_503=RATE (0..1), bmc_latency=MS, bmc_reset=RATE, never_boots, ssh_drop=N (cut
// the ramdisk's connection during its Nth command), pull_fail, bootc_fail, wrong_uuid,
// power_delay=MS or MIN-MAX (this node's BMC's power changes take MS, or a random time in the
// range, drawn anew for each change from a generator seeded by the node's index); for the
// simulated installer: ks_error (its install fails: %onerror fires), installer_silent (it never
// runs the kickstart, so never calls back), wrong_token (its callbacks carry a wrong token).
import { TsbmError } from 'tsbm/lib/errors.js';
import { FAULTS } from 'tsbm/lib/inventory/sim-faults.js';

export interface NodeFaults {
  bmc503?: number;
  bmcLatencyMs?: number;
  bmcReset?: number;
  neverBoots?: boolean;
  sshDrop?: number;
  pullFail?: boolean;
  bootcFail?: boolean;
  wrongUuid?: boolean;
  ksError?: boolean;
  installerSilent?: boolean;
  wrongToken?: boolean;
  /** This node's power transitions take this long (a range: random, per transition). */
  powerDelayMs?: { min: number; max: number };
}

interface Entry {
  selector: string;
  faults: NodeFaults;
}

const RATE = (name: string, v: string | undefined): number => {
  const n = Number(v);
  if (v === undefined || !Number.isFinite(n) || n < 0 || n > 1) throw bad(`${name} needs a rate between 0 and 1, got "${v ?? ''}"`);
  return n;
};
const COUNT = (name: string, v: string | undefined): number => {
  const n = Number(v);
  if (v === undefined || !Number.isInteger(n) || n < 0) throw bad(`${name} needs a whole number, got "${v ?? ''}"`);
  return n;
};

const RANGE = (name: string, v: string | undefined): { min: number; max: number } => {
  const m = /^(\d+)(?:-(\d+))?$/.exec(v ?? '');
  const min = Number(m?.[1]);
  const max = m?.[2] !== undefined ? Number(m[2]) : min;
  if (!m || max < min) throw bad(`${name} needs milliseconds (MS) or a range (MIN-MAX), got "${v ?? ''}"`);
  return { min, max };
};

function bad(message: string): TsbmError {
  return new TsbmError('options', `--faults: ${message}`, {
    hint: 'example: --faults "node02:bmc_503=0.3,bmc_latency=200;3:never_boots;*:ssh_drop=0"',
  });
}

export function parseFaultSpec(spec: string | undefined): Entry[] {
  if (!spec?.trim()) return [];
  return spec
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const colon = part.startsWith('every:') ? part.indexOf(':', 6) : part.indexOf(':');
      if (colon <= 0) throw bad(`"${part}" has no SELECTOR:faults form`);
      const selector = part.slice(0, colon);
      const faults: NodeFaults = {};
      for (const item of part.slice(colon + 1).split(',').map((s) => s.trim()).filter(Boolean)) {
        const [name, value] = item.split('=', 2) as [string, string | undefined];
        switch (name) {
          case 'bmc_503': faults.bmc503 = RATE(name, value); break;
          case 'bmc_latency': faults.bmcLatencyMs = COUNT(name, value); break;
          case 'bmc_reset': faults.bmcReset = RATE(name, value); break;
          case 'never_boots': faults.neverBoots = true; break;
          case 'ssh_drop': faults.sshDrop = COUNT(name, value ?? '1'); break;
          case 'pull_fail': faults.pullFail = true; break;
          case 'bootc_fail': faults.bootcFail = true; break;
          case 'wrong_uuid': faults.wrongUuid = true; break;
          case 'ks_error': faults.ksError = true; break;
          case 'installer_silent': faults.installerSilent = true; break;
          case 'wrong_token': faults.wrongToken = true; break;
          case 'power_delay': faults.powerDelayMs = RANGE(name, value); break;
          default:
            throw bad(`unknown fault "${name}" (known: ${FAULTS.map((f) => f.name).join(', ')})`);
        }
      }
      return { selector, faults };
    });
}

export function faultsFor(entries: Entry[], name: string, index: number): NodeFaults {
  const out: NodeFaults = {};
  for (const e of entries) {
    const s = e.selector;
    const every = s.startsWith('every:') ? Number(s.slice(6)) : undefined;
    const hit = s === '*' || s === name || s === String(index) || (every !== undefined && every > 0 && index % every === 0);
    if (hit) Object.assign(out, e.faults);
  }
  return out;
}
