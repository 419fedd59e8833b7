// Host ranges in inventory host names, as Ansible writes them: `node[01:20]` (zero padding kept),
// `rack[a:c]-[1:2]` (several ranges multiply), `web[1:9:2]` (stride).
const RANGE = /\[([^\]]*)\]/;
const MAX_HOSTS = 100_000;

export class HostRangeError extends Error {}

function expandOne(spec: string): string[] {
  const parts = spec.split(':');
  if (parts.length < 2 || parts.length > 3)
    throw new HostRangeError(`bad range [${spec}]: write [START:END] or [START:END:STEP]`);
  const [start, end, stepText] = parts as [string, string, string | undefined];
  const step = stepText === undefined || stepText === '' ? 1 : Number(stepText);
  if (!Number.isInteger(step) || step < 1)
    throw new HostRangeError(`bad range [${spec}]: the step must be a positive integer`);
  if (/^\d+$/.test(start) && /^\d+$/.test(end)) {
    const a = Number(start);
    const b = Number(end);
    if (a > b) throw new HostRangeError(`bad range [${spec}]: start is after end`);
    const width = start.length > 1 && start.startsWith('0') ? start.length : 0;
    const out: string[] = [];
    for (let i = a; i <= b; i += step) out.push(width ? String(i).padStart(width, '0') : String(i));
    return out;
  }
  if (/^[a-zA-Z]$/.test(start) && /^[a-zA-Z]$/.test(end)) {
    const a = start.charCodeAt(0);
    const b = end.charCodeAt(0);
    if (a > b) throw new HostRangeError(`bad range [${spec}]: start is after end`);
    const out: string[] = [];
    for (let c = a; c <= b; c += step) out.push(String.fromCharCode(c));
    return out;
  }
  throw new HostRangeError(`bad range [${spec}]: both ends must be numbers or single letters`);
}

/** Expand every range in a host name; a name without ranges comes back alone. Throws HostRangeError. */
export function expandHostRange(name: string): string[] {
  const m = RANGE.exec(name);
  if (!m) return [name];
  const head = name.slice(0, m.index);
  const tails = expandHostRange(name.slice(m.index + m[0].length));
  const out: string[] = [];
  for (const v of expandOne(m[1]!)) {
    for (const t of tails) {
      out.push(`${head}${v}${t}`);
      if (out.length > MAX_HOSTS)
        throw new HostRangeError(`range in "${name}" expands to more than ${MAX_HOSTS} hosts`);
    }
  }
  return out;
}

/**
 * A host entry as Ansible's inventory files write it: `name`, `name:PORT`, with ranges.
 * (Not for IPv6 addresses, which have several colons and no port here.) Throws HostRangeError.
 */
export function expandHostPattern(pattern: string): { names: string[]; port?: number } {
  const withPort = /^([^:]+):(\d{1,5})$/.exec(pattern);
  const names = expandHostRange(withPort ? withPort[1]! : pattern);
  return withPort ? { names, port: Number(withPort[2]) } : { names };
}
