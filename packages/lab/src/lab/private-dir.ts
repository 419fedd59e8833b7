// The lab directory holds the lab's inventory (BMC and registry passwords) and the controller's
// private key: only its owner may enter it (0700), and the inventory is 0600 whatever an earlier
// lab left there.
import { chmodSync, closeSync, fchmodSync, lstatSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';

/** What a lab directory holds; a directory holding anything else is not the lab's to lock down. */
const LAB_ENTRIES = /^(nodes|images|cache|inventory\.yml|lab\.json|lab\.log|known_hosts|bmc-ca\.pem|controller_ed25519(\.pub)?)$/;

/**
 * Makes `dir` (and missing parents) with mode 0700. An existing directory is tightened to 0700
 * when it is ours and holds nothing but a lab (a directory the operator also uses for other
 * things, or a shared one like /tmp, is left as it is).
 */
export function makeLabDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if ((st.mode & 0o077) === 0 || !st.isDirectory()) return;
  const mine = process.getuid === undefined || st.uid === process.getuid();
  const shared = (st.mode & 0o1000) !== 0; // sticky: /tmp and the like
  if (mine && !shared && readdirSync(dir).every((n) => LAB_ENTRIES.test(n))) chmodSync(dir, 0o700);
}

/** Writes `data` to `file` readable by its owner only, also when the file already existed. */
export function writePrivateFile(file: string, data: string): void {
  const fd = openSync(file, 'w', 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
}
