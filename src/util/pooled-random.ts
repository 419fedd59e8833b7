// Small random fills served from a pool that one crypto call refills. ssh2 pads every packet it
// sends with random bytes through its own randomFillSync call; at a thousand nodes those calls
// were about 4% of the runner's CPU and of the lab's. Every pooled byte is CSPRNG output and
// is handed out once.
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 64 * 1024;
/** Fills larger than this go straight to crypto (the pool is for packet padding). */
const MAX_POOLED = 256;

let pool = Buffer.alloc(0);
let used = 0;
let served = 0;

/** Same contract as crypto.randomFillSync for the ArrayBufferView forms ssh2 uses. */
export function pooledRandomFill<T extends NodeJS.ArrayBufferView>(buf: T, offset = 0, size?: number): T {
  const length = size ?? buf.byteLength - offset;
  if (!(buf instanceof Uint8Array) || length > MAX_POOLED || offset < 0 || offset + length > buf.byteLength) {
    return randomFillSync(buf, offset, size);
  }
  if (used + length > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    used = 0;
  }
  pool.copy(buf, offset, used, used + length);
  used += length;
  served += length;
  return buf;
}

/** Bytes handed out from the pool so far (tests check that ssh2 draws from it). */
export function pooledRandomBytesServed(): number {
  return served;
}

/** `bytes` random bytes as hex, from the pool (command markers and temp names, thousands per run). */
export function pooledRandomHex(bytes: number): string {
  return pooledRandomFill(Buffer.allocUnsafe(bytes)).toString('hex');
}
