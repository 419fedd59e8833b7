// What the run's callback endpoints share (the installer's /install/ and the ramdisk's /agent/):
// registrations by host with a public id and a secret token, the token compared in constant
// time, change listeners for the waits, and plain-text replies and bounded bodies.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const sha = (s: string) => createHash('sha256').update(s).digest();

/** A callback registration's token check and change listeners (installer and ramdisk callbacks). */
export class TokenEntry {
  closed = false;
  private readonly listeners = new Set<() => void>();
  private readonly tokenHash: Buffer;

  constructor(
    readonly host: string,
    readonly id: string,
    readonly token: string,
    readonly url: string,
  ) {
    this.tokenHash = sha(token);
  }

  tokenMatches(given: string | undefined): boolean {
    // Compared as hashes: equal lengths, constant time, whatever the caller sent.
    return given !== undefined && timingSafeEqual(sha(given), this.tokenHash);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(): void {
    for (const l of [...this.listeners]) l();
  }

  close(): void {
    this.closed = true;
  }
}

export function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' }).end(text.endsWith('\n') ? text : `${text}\n`);
}

/** Reads at most `max` bytes; undefined when the body is larger. */
export async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > max) return undefined;
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A run's registrations of one endpoint: one live registration per host. */
export class TokenEntries<E extends TokenEntry> {
  private readonly byId = new Map<string, E>();

  /** A fresh id and token for `host`; an earlier registration of the host stops answering. */
  register(host: string, make: (id: string, token: string) => E): E {
    for (const e of this.byId.values()) if (e.host === host) e.close();
    const entry = make(randomBytes(12).toString('hex'), randomBytes(32).toString('base64url'));
    this.byId.set(entry.id, entry);
    return entry;
  }

  /** The live registration of a host in this run. */
  find(host: string): E | undefined {
    for (const e of this.byId.values()) if (e.host === host && !e.closed) return e;
    return undefined;
  }

  byIdOf(id: string): E | undefined {
    return this.byId.get(id);
  }
}
