// What the lab and its spawner processes say to each other: requests and replies, and a 5-byte
// header that opens each stdio socket (command id, 0 for stdin+stdout, 1 for stderr).
//
// The node spawner (spawner-worker.ts) gets these objects over fork's IPC channel. The C one
// (spawner.c) reads frames on stdin and writes frames on stdout: a uint32 BE byte
// length, then that many bytes of fields separated by NUL (argv and environment strings cannot
// hold a NUL, so any other byte, newlines and UTF-8 included, passes as is). Numbers are decimal.
//   lab -> spawner  spawn:   s, id, file, cwd ('' = inherit), argc, argv[1..argc], KEY=VALUE...
//                   kill:    k, id, signal number (the process group gets it)
//   spawner -> lab  started: s, id, pid
//                   exit:    x, id, code or '', signal number or ''
//                   error:   e, id, message
import { constants } from 'node:os';

export interface SpawnRequest {
  id: number;
  file: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
}

export type SpawnReply =
  // Sent once the spawner has let go of the stdio sockets: only then may stdin flow, or the
  // spawner's own socket could read what was meant for the command.
  | { id: number; started: true; pid?: number }
  | { id: number; code: number | null; signal: NodeJS.Signals | null }
  | { id: number; error: string };

export const HEADER_BYTES = 5;

export function streamHeader(id: number, kind: number): Buffer {
  const b = Buffer.alloc(HEADER_BYTES);
  b.writeUInt32BE(id >>> 0, 0);
  b.writeUInt8(kind, 4);
  return b;
}

export function readStreamHeader(b: Buffer): { id: number; kind: number } {
  return { id: b.readUInt32BE(0), kind: b.readUInt8(4) };
}

function frame(fields: string[]): Buffer {
  for (const f of fields) {
    if (f.includes('\0')) throw new Error(`spawn: a NUL byte cannot pass to a process: ${JSON.stringify(f)}`);
  }
  const body = Buffer.from(fields.join('\0'), 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

export function encodeSpawn(req: SpawnRequest): Buffer {
  const env = Object.entries(req.env).map(([k, v]) => `${k}=${v}`);
  return frame(['s', String(req.id), req.file, req.cwd ?? '', String(req.args.length), ...req.args, ...env]);
}

export function encodeKill(id: number, signal: NodeJS.Signals): Buffer {
  return frame(['k', String(id), String(constants.signals[signal])]);
}

// The first name wins where two share a number (SIGABRT before SIGIOT), as in node's own reports.
const signalNames = new Map<number, NodeJS.Signals>();
for (const [name, n] of Object.entries(constants.signals) as [NodeJS.Signals, number][]) {
  if (!signalNames.has(n)) signalNames.set(n, name);
}

function decodeReply(fields: string[]): SpawnReply | undefined {
  const [type, idField, a, b] = fields;
  const id = Number(idField);
  if (type === 's') return { id, started: true, ...(a ? { pid: Number(a) } : {}) };
  if (type === 'x')
    return { id, code: a ? Number(a) : null, signal: b ? (signalNames.get(Number(b)) ?? null) : null };
  if (type === 'e') return { id, error: a ?? 'the spawner failed' };
  return undefined;
}

/** Cuts the C spawner's stdout into replies, however the pipe splits it. */
export class ReplyReader {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly onReply: (m: SpawnReply) => void) {}

  push(chunk: Buffer): void {
    let buf = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    while (buf.length >= 4) {
      const len = buf.readUInt32BE(0);
      if (buf.length < 4 + len) break;
      const m = decodeReply(
        buf
          .subarray(4, 4 + len)
          .toString('utf8')
          .split('\0'),
      );
      buf = buf.subarray(4 + len);
      if (m) this.onReply(m);
    }
    this.buffered = buf;
  }
}
