// Per-tick write batching for SSH sockets: a burst of packets becomes one writev, the bytes
// arrive intact and in order, and nothing waits past the tick that wrote it.
import { createServer, type Socket, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { coalesceWrites } from '../../src/util/coalesce-writes.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function pair(): Promise<{ client: Socket; received: () => Buffer }> {
  const chunks: Buffer[] = [];
  const server = createServer((s) => s.on('data', (d: Buffer) => chunks.push(d)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const client = connect(port, '127.0.0.1');
  await new Promise((r) => client.once('connect', r));
  cleanups.push(() => {
    client.destroy();
    server.close();
  });
  return { client, received: () => Buffer.concat(chunks) };
}

function countLowLevelWrites(sock: Socket): () => number {
  let n = 0;
  const s = sock as unknown as { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
  const w = s._write.bind(sock);
  const wv = s._writev.bind(sock);
  s._write = (...a) => {
    n++;
    w(...a);
  };
  s._writev = (...a) => {
    n++;
    wv(...a);
  };
  return () => n;
}

describe('coalesceWrites', () => {
  it('sends a burst written in one tick with one low-level write', async () => {
    const { client, received } = await pair();
    coalesceWrites(client);
    const writes = countLowLevelWrites(client);
    for (let i = 0; i < 50; i++) client.write(Buffer.from(`packet-${i};`));
    await new Promise((r) => setTimeout(r, 100));
    expect(writes()).toBe(1);
    expect(received().toString()).toBe(Array.from({ length: 50 }, (_, i) => `packet-${i};`).join(''));
  });

  it('without it, the same burst is many writes (what the test above guards against)', async () => {
    const { client } = await pair();
    const writes = countLowLevelWrites(client);
    for (let i = 0; i < 50; i++) client.write(Buffer.from(`packet-${i};`));
    await new Promise((r) => setTimeout(r, 100));
    expect(writes()).toBeGreaterThan(1);
  });

  it('flushes every tick: writes in later ticks arrive too, callbacks fire', async () => {
    const { client, received } = await pair();
    coalesceWrites(client);
    coalesceWrites(client); // idempotent
    const done: number[] = [];
    client.write('a', () => done.push(1));
    await new Promise((r) => setImmediate(r));
    client.write('b', () => done.push(2));
    await new Promise((r) => setTimeout(r, 100));
    expect(received().toString()).toBe('ab');
    expect(done).toEqual([1, 2]);
  });
});
