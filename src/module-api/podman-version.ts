// What the ramdisk's podman can do. Ramdisks differ (Debian 12 ships 4.3 without
// `pull --retry-delay`; current IPA ramdisks have it), so flags are decided by probing.
export function parsePodmanVersion(text: string): [number, number, number] | undefined {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/** `podman pull --help` text mentions the flag when supported; that is the most reliable probe. */
export function helpHasFlag(help: string, flag: string): boolean {
  return new RegExp(`(^|\\s)${flag.replace(/[-]/g, '\\-')}([=\\s]|$)`, 'm').test(help);
}

/** podman pull has --retry and --retry-delay from 5.0 on (containers/podman#21659). */
const PULL_RETRY_SINCE: readonly [number, number, number] = [5, 0, 0];

/** Whether `podman --version` text says pull takes --retry-delay; undefined when it cannot tell. */
export function pullHasRetryDelay(versionText: unknown): boolean | undefined {
  const v = typeof versionText === 'string' ? parsePodmanVersion(versionText) : undefined;
  if (!v) return undefined;
  for (let i = 0; i < 3; i++) if (v[i] !== PULL_RETRY_SINCE[i]) return v[i]! > PULL_RETRY_SINCE[i]!;
  return true;
}
