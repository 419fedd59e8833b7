// `tsbm sim up|down|status`: the simulated lab (fake Redfish BMCs + simulated ramdisks).
import { type Command, Option } from 'commander';
import { shQuote } from '../util/shell-quote.js';
import { faultHelp } from '../inventory/sim-faults.js';
import { loadSimLab } from '../inventory/sim-lab.js';

const DEFAULT_DIR = '.tsbm/sim';

const int = (name: string, min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw Object.assign(new Error(`${name} must be a whole number from ${min} to ${max}, got "${v}"`), { code: 'commander.invalidArgument' });
  }
  return n;
};
const collect = (v: string, prev: string[]) => [...prev, ...v.split(',').filter(Boolean)];

export function register(program: Command): void {
  const sim = program
    .command('sim')
    .description('run a lab: fake Redfish BMCs in front of simulated nodes (no hardware, no root) or QEMU virtual machines')
    .addHelpText(
      'after',
      `
Examples:
  tsbm sim up --nodes 3                      # start 3 nodes, write .tsbm/sim/inventory.yml
  tsbm run playbooks/deploy-bootc.yml -i .tsbm/sim/inventory.yml
  tsbm sim status                            # power, boot override, media, disk layout
  tsbm sim down
  tsbm sim up --nodes 5 --faults "node02:bmc_503=0.3;3:never_boots"
  tsbm sim up --nodes 2 --machines qemu      # UEFI virtual machines; serial consoles in sim status

An inventory can also start a lab for the length of one run: see inventory-examples/sim.yml.`,
    );

  const labOptions = (c: Command) =>
    c
      .option('--dir <dir>', 'lab directory (inventory, keys, disks, log)', DEFAULT_DIR)
      .option('-n, --nodes <n>', 'number of nodes', int('--nodes', 1, 5000), 3)
      .option(
        '--mockup <tree>',
        'Redfish tree(s) to serve: a shipped name or a directory; several alternate across nodes; a tree whose BMC manages several Systems puts that many nodes behind one BMC',
        collect,
        [],
      )
      .option('--faults <spec>', 'inject faults, e.g. "node02:bmc_503=0.3,bmc_latency=200;3:never_boots;*:ssh_drop=4"')
      .option('--boot-delay <ms>', 'power-on to ramdisk SSH', int('--boot-delay', 0, 600_000))
      .option('--power-delay <ms>', 'PoweringOn/PoweringOff duration', int('--power-delay', 0, 600_000))
      .addOption(
        new Option('--machines <kind>', 'sim: simulated nodes; qemu: QEMU virtual machines with UEFI firmware (OVMF) behind the fake BMCs (needs qemu-system-x86 and ovmf)')
          .choices(['sim', 'qemu'])
          .default('sim'),
      );

  interface LabCliOpts {
    dir: string;
    nodes: number;
    mockup: string[];
    faults?: string;
    bootDelay?: number;
    powerDelay?: number;
    machines: 'sim' | 'qemu';
  }
  const toLab = (o: LabCliOpts) => ({
    dir: o.dir,
    nodes: o.nodes,
    mockups: o.mockup,
    ...(o.faults ? { faults: o.faults } : {}),
    ...(o.bootDelay !== undefined ? { bootDelayMs: o.bootDelay } : {}),
    ...(o.powerDelay !== undefined ? { powerDelayMs: o.powerDelay } : {}),
    ...(o.machines === 'qemu' ? { machines: 'qemu' as const } : {}),
  });

  labOptions(sim.command('up').description('start N simulated nodes in a background process and write an inventory for them'))
    .addHelpText(
      'after',
      `
--faults SPEC: ";"-separated SELECTOR:fault[=value],... entries; SELECTOR is a node name (node02),
a 1-based index (2), * for every node, or every:N for every Nth node. Faults:
${faultHelp()}`,
    )
    .action(
    async (o: LabCliOpts) => {
      const rec = await (await loadSimLab()).labUp(toLab(o));
      process.stdout.write(
        `simulated lab up: ${rec.nodes} node(s), pid ${rec.pid}\ninventory: ${rec.inventory}\nnext: tsbm run playbooks/deploy-bootc.yml -i ${shQuote(rec.inventory)}\n`,
      );
    },
  );

  sim
    .command('down')
    .description('stop the simulated lab')
    .option('--dir <dir>', 'lab directory', DEFAULT_DIR)
    .action(async (o: { dir: string }) => {
      process.stdout.write((await (await loadSimLab()).labDown(o.dir)) ? 'simulated lab stopped\n' : `no simulated lab was running in ${o.dir}\n`);
    });

  sim
    .command('status')
    .description('list nodes with power state, boot override, inserted media, disk layout and what a simulated installer did')
    .option('--dir <dir>', 'lab directory', DEFAULT_DIR)
    .option('--json', 'print JSON')
    .action(async (o: { dir: string; json?: boolean }) => {
      const rows = await (await loadSimLab()).labStatus(o.dir);
      if (o.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      // Nodes behind a BMC that manages several Systems: which System each one is; what a
      // simulated installer did (deploy-anaconda.yml), when one ran on any node.
      const cols = [
        'name',
        ...(rows.some((r) => r.system) ? ['system'] : []),
        'power',
        'phase',
        'bootOverride',
        'media',
        ...(rows.some((r) => r.disk !== undefined) ? ['disk'] : []),
        ...(rows.some((r) => r.installer) ? ['installer'] : []),
        // Virtual machines: where each one's serial console is written.
        ...(rows.some((r) => r.console) ? ['ssh', 'console'] : []),
      ];
      const table = [cols.map((c) => c.toUpperCase()), ...rows.map((r) => cols.map((c) => String(r[c] ?? '')))];
      const w = cols.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
      process.stdout.write(`${table.map((r) => r.map((x, i) => x.padEnd(w[i]!)).join('  ').trimEnd()).join('\n')}\n`);
      // A VM's last console lines: where its firmware or kernel stopped, without opening the file.
      for (const r of rows) {
        const tail = Array.isArray(r.consoleTail) ? (r.consoleTail as unknown[]).map(String) : [];
        if (tail.length) process.stdout.write(`\n${String(r.name)} console (${String(r.console)}):\n${tail.map((l) => `  ${l}`).join('\n')}\n`);
      }
    });
}
