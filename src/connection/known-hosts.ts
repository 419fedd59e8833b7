// Reading and appending OpenSSH known_hosts files: plain and hashed (`|1|salt|hash`) host
// patterns, `[host]:port` for non-22 ports, wildcards and negation, @revoked markers.
import { createHmac, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

export interface KnownHostEntry {
  file: string;
  line: number;
  keyType: string;
  key: Buffer;
  revoked: boolean;
}

/** The name a host is recorded under: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(address: string, port: number): string {
  return port === 22 ? address : `[${address}]:${port}`;
}

function globToRegExp(glob: string): RegExp {
  const re = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 'i');
}

function matchesHashed(pattern: string, name: string): boolean {
  const [, magic, salt, hash] = pattern.split('|');
  if (magic !== '1' || !salt || !hash) return false;
  const h = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
  return h === hash;
}

/** True when a comma-separated host pattern list matches `name` (a negated match wins). */
export function hostPatternMatches(patterns: string, name: string): boolean {
  let hit = false;
  for (const p of patterns.split(',')) {
    if (p.startsWith('|')) {
      if (matchesHashed(p, name)) hit = true;
      continue;
    }
    const negated = p.startsWith('!');
    const glob = negated ? p.slice(1) : p;
    if (globToRegExp(glob).test(name)) {
      if (negated) return false;
      hit = true;
    }
  }
  return hit;
}

interface ParsedLine {
  line: number;
  patterns: string;
  keyType: string;
  b64: string;
  revoked: boolean;
}

/** One file's lines, parsed once: plain host names indexed, everything else (globs, hashes) scanned. */
interface ParsedFile {
  text: string;
  byName: Map<string, ParsedLine[]>;
  scan: ParsedLine[];
  /** The file's identity, size and times when it was read (see readParsed). */
  stamp: string;
  /** Its times were older than SETTLED_MS when read: an unchanged stamp means unchanged text. */
  settled: boolean;
}

const PLAIN_NAMES = /^[^*?!|,]+(,[^*?!|,]+)*$/;
// A fleet's known_hosts holds thousands of lines and every connection looks one up: parsing the
// file and compiling every pattern per lookup made that quadratic, and so did reading it (2000
// reads of 200 KB at a thousand nodes). A lookup stats the file and reuses the parse while its
// stamp (device, inode, size, mtime, ctime) is unchanged. File times come from a coarse clock,
// so a rewrite within the same tick keeps its stamp: a parse is trusted on its stamp alone only
// once the file's times were SETTLED_MS old when it was read (git's "racy" rule); until then the
// text is read and compared every time.
const parsedFiles = new Map<string, ParsedFile>();
const SETTLED_MS = 2000;

function parseKnownHosts(text: string, stamp: string, settled: boolean): ParsedFile {
  const parsed: ParsedFile = { text, byName: new Map(), scan: [], stamp, settled };
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const fields = line.split(/\s+/);
    let revoked = false;
    if (fields[0]?.startsWith('@')) {
      const marker = fields.shift();
      if (marker === '@cert-authority') return; // certificates are not supported; ignore CA lines
      revoked = marker === '@revoked';
    }
    const [patterns, keyType, b64] = fields;
    if (!patterns || !keyType || !b64) return;
    const entry: ParsedLine = { line: i + 1, patterns, keyType, b64, revoked };
    if (!PLAIN_NAMES.test(patterns)) {
      parsed.scan.push(entry);
      return;
    }
    for (const name of new Set(patterns.toLowerCase().split(','))) {
      const list = parsed.byName.get(name);
      if (list) list.push(entry);
      else parsed.byName.set(name, [entry]);
    }
  });
  return parsed;
}

async function readParsed(file: string): Promise<ParsedFile | undefined> {
  let text: string;
  let stamp: string;
  let settled: boolean;
  try {
    const readAt = Date.now();
    const st = await fs.stat(file, { bigint: true });
    stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    const cached = parsedFiles.get(file);
    if (cached?.settled && cached.stamp === stamp) return cached;
    settled = Math.max(Number(st.mtimeNs / 1_000_000n), Number(st.ctimeNs / 1_000_000n)) < readAt - SETTLED_MS;
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const cached = parsedFiles.get(file);
  if (cached?.text === text) {
    cached.stamp = stamp;
    cached.settled = settled;
    return cached;
  }
  const parsed = parseKnownHosts(text, stamp, settled);
  parsedFiles.set(file, parsed);
  return parsed;
}

/** Entries of `file` recorded for `name`, in file order; a missing file has none. */
export async function lookupKnownHosts(file: string, name: string): Promise<KnownHostEntry[]> {
  const parsed = await readParsed(file);
  if (!parsed) return [];
  const hits = [...(parsed.byName.get(name.toLowerCase()) ?? []), ...parsed.scan.filter((e) => hostPatternMatches(e.patterns, name))];
  hits.sort((a, b) => a.line - b.line);
  return hits.map((e) => ({ file, line: e.line, keyType: e.keyType, key: Buffer.from(e.b64, 'base64'), revoked: e.revoked }));
}

/** Appends a hashed entry (like `ssh -o HashKnownHosts=yes`), creating the file 0600 if needed. */
export async function appendKnownHost(file: string, name: string, keyType: string, key: Buffer): Promise<number> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const salt = randomBytes(20);
  const hash = createHmac('sha1', salt).update(name).digest('base64');
  const entry = `|1|${salt.toString('base64')}|${hash} ${keyType} ${key.toString('base64')}\n`;
  let existing = '';
  try {
    existing = await fs.readFile(file, 'utf8');
  } catch {
    // new file
  }
  const prefix = existing && !existing.endsWith('\n') ? '\n' : '';
  await fs.appendFile(file, prefix + entry, { mode: 0o600 });
  return (existing + prefix).split('\n').length;
}

/** The key type named inside an SSH wire-format public key blob. */
export function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + len).toString('latin1');
}
