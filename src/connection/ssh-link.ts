// What one SSH connection's parts share about its ssh2 client's life: the operations in flight
// (each fails when the connection goes), noticing a loss, and ending a client politely.
import type { Client } from './ssh2-lib.js';

/** Operations in flight on one connection: each entry fails its operation when the connection goes. */
export type Inflight = Set<(err: Error) => void>;

export const LOST_HINT = 'the host went down or the network dropped; the next task reconnects';

/** Fails everything in flight with `err`. */
export function failInflight(inflight: Inflight, err: Error): void {
  for (const fail of [...inflight]) fail(err);
}

/** Calls `lost` once `client` reports an error or closes (keepalives unanswered included). */
export function onClientLost(client: Client, lost: (why: string) => void): void {
  client.on('error', (e: Error) => lost(e.message));
  client.on('close', () => lost('closed by the remote side or the network'));
}

/** Whether `client` has gone, or goes within a moment (its close may trail a channel's). */
export function lostSoon(client: Client, isCurrent: () => boolean): Promise<boolean> {
  if (!isCurrent()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onClose = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      client.off('close', onClose);
      resolve(!isCurrent());
    }, 250);
    client.once('close', onClose);
  });
}

/** Ends `client` and waits for its close, at most a second. */
export function endClient(client: Client): Promise<void> {
  return new Promise<void>((resolve) => {
    client.once('close', () => resolve());
    client.end();
    setTimeout(resolve, 1000).unref();
  });
}
