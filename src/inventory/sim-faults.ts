// The simulated lab's faults, named once for `tsbm sim up --help` (tsbm, without loading the
// lab) and for the lab's --faults parser (packages/lab/src/lab/faults.ts).

/** Every fault the spec takes, with what it does: `tsbm sim up --help` and the parser's error list them. */
export const FAULTS: readonly { name: string; value?: string; does: string }[] = [
  { name: 'bmc_503', value: 'RATE', does: 'the BMC answers 503 to this share of requests (0..1)' },
  { name: 'bmc_latency', value: 'MS', does: 'the BMC answers this much later' },
  { name: 'bmc_reset', value: 'RATE', does: 'the BMC resets the connection for this share of requests (0..1)' },
  { name: 'never_boots', does: 'the ramdisk never comes up after power-on' },
  { name: 'ssh_drop', value: 'N', does: "the ramdisk's SSH connection is cut during its Nth command (default 1)" },
  { name: 'pull_fail', does: 'podman pull fails on the ramdisk' },
  { name: 'bootc_fail', does: 'bootc install fails on the ramdisk' },
  { name: 'wrong_uuid', does: 'the ramdisk reports another system UUID (wait_agent refuses it)' },
  { name: 'power_delay', value: 'MS|MIN-MAX', does: "this node's BMC power changes take MS (or a random time in the range)" },
  { name: 'ks_error', does: "the simulated installer's install fails (%onerror fires)" },
  { name: 'installer_silent', does: 'the simulated installer never runs the kickstart (never calls back)' },
  { name: 'wrong_token', does: "the simulated installer's callbacks carry a wrong token" },
];

/** The fault list as `sim up --help` prints it, one a line. */
export function faultHelp(): string {
  const rows = FAULTS.map((f) => [`${f.name}${f.value ? `=${f.value}` : ''}`, f.does] as const);
  const w = Math.max(...rows.map(([n]) => n.length));
  return rows.map(([n, d]) => `  ${n.padEnd(w)}  ${d}`).join('\n');
}
