// Supermicro firmware (seen on SYS-510T, Redfish 1.14) lists the ResetType
// "GracefulShutdownGracefulRestart": two values glued together. The BMC accepts each half,
// so the list is repaired into the real names instead of offering a value that would fail.
const KNOWN = ['GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'ForceOff', 'ForceOn', 'PushPowerButton', 'PowerCycle', 'Nmi', 'On'];

export function repairResetTypes(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    if (KNOWN.includes(v)) out.push(v);
    else out.push(...splitGlued(v));
  }
  return [...new Set(out)];
}

function splitGlued(v: string): string[] {
  for (const k of KNOWN) {
    if (v.startsWith(k) && v.length > k.length) {
      const rest = splitGlued(v.slice(k.length));
      if (rest.length) return [k, ...rest];
    }
  }
  return KNOWN.includes(v) ? [v] : [];
}
