// What a capability's preflight check reports about a node before anything touches it: the
// deploy preflight gathers these from every capability (BMC, image, registry, kickstart) and
// fails the node with them, each as a line saying what is wrong and what to do.
export interface Problem {
  /** bmc | image | registry | image_url | iso | kickstart */
  check: string;
  message: string;
  /** What to do about it. */
  fix: string;
}

/** The problem as a line an operator reads: what, then what to do. */
export function problemLine(p: Problem): string {
  // A message that starts by naming its check ("registry quay.io refused ...") is not prefixed
  // with it again ("registry: registry quay.io ...").
  const named = p.message.toLowerCase().startsWith(`${p.check.toLowerCase()} `);
  return `${named ? '' : `${p.check}: `}${p.message} (${p.fix})`;
}
