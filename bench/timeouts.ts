// bench/timeouts: how far past their setting tsbm's timeouts fire, where the functional tests
// only check that they fire (a loaded CI machine makes any wall-clock bound there flaky). The
// Redfish request timeout is kept by tsbm's own timer (undici ticks its own in half seconds):
// a 120 ms timeout against a BMC that never answers should end near 120 ms, not at 500 ms.
// Usage: node dist-bench/bench/timeouts.js [R]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transport } from '../src/redfish/transport.js';

const R = Number(process.argv[2] ?? 15);
const TIMEOUT_MS = 120;

const server = createServer(() => {}); // accepts, never answers
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const { port } = server.address() as AddressInfo;
const endpoint = { baseUrl: `http://127.0.0.1:${port}`, bmc: 'bench', username: undefined, password: undefined, systemId: undefined, verifyCa: false };

const xs: number[] = [];
for (let i = 0; i < R; i++) {
  const t = new Transport(endpoint, { timeoutMs: TIMEOUT_MS, retry: { retries: 0 } });
  const t0 = process.hrtime.bigint();
  await t.request('GET', '/redfish/v1').catch(() => undefined);
  xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  t.close();
}
server.closeAllConnections();
server.close();
xs.sort((a, b) => a - b);
const median = xs[Math.floor(xs.length / 2)]!;
console.log(`Redfish request timeout ${TIMEOUT_MS} ms: median end after ${median.toFixed(0)} ms over ${R} runs (max ${xs.at(-1)!.toFixed(0)} ms); ratio ${(median / TIMEOUT_MS).toFixed(2)}`);
