// Memory a test can measure without flaking on when the collector happens to run: `retained()`
// collects garbage first, so it counts only what is still referenced (heap and Buffers).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes held in the JS heap and in Buffers/ArrayBuffers after a full collection. */
export function retained(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
}

/** Bytes held right now, garbage included (for a peak sampled while work runs). */
export function heldNow(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
}
