// What the lab and its spawner processes say to each other: requests and replies over the
// fork IPC channel, and a 5-byte header that opens each stdio socket (command id, 0 for
// stdin+stdout, 1 for stderr).

export interface SpawnRequest {
  id: number;
  file: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
}

export type SpawnReply =
  // Sent once the worker has let go of the stdio sockets: only then may stdin flow, or the
  // worker's own socket could read what was meant for the command.
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
