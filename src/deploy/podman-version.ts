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
