// A BMC that answers with an endless body: tsbm stops reading at tsbm_max_redfish_body (default
// 16 MiB) instead of buffering it, refuses the answer, and the cap can be raised.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { MIB } from '../../src/util/limits.js';
import { heldNow, retained } from '../helpers/heap.js';
import { makeCtx, type TestCtx } from './redfish-helpers.js';

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c();
});

/** A BMC whose System answers with `systemBytes` of JSON (padding in a string), streamed. */
async function bigBmc(systemBytes: number, chunked: boolean): Promise<{ url: string; sent: () => number }> {
  let sent = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const json = (body: unknown) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (path === '/redfish/v1/') return json({ Systems: { '@odata.id': '/redfish/v1/Systems' } });
    if (path === '/redfish/v1/Systems') return json({ Members: [{ '@odata.id': '/redfish/v1/Systems/1' }] });
    if (path === '/redfish/v1/Systems/1') return stream(res, systemBytes, chunked, (n) => (sent += n));
    res.writeHead(404).end();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  open.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent: () => sent };
}

function stream(res: ServerResponse, total: number, chunked: boolean, count: (n: number) => void): void {
  const head = Buffer.from(
    JSON.stringify({ Id: '1', PowerState: 'On', Actions: { '#ComputerSystem.Reset': { target: '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset' } }, Pad: '' }).slice(0, -2),
  );
  const tail = Buffer.from('"}');
  res.writeHead(200, { 'Content-Type': 'application/json', ...(chunked ? {} : { 'Content-Length': String(total) }) });
  const block = Buffer.alloc(256 * 1024, 'x');
  let left = total - head.length - tail.length;
  res.write(head);
  count(head.length);
  const pump = () => {
    while (left > 0) {
      const b = left >= block.length ? block : block.subarray(0, left);
      left -= b.length;
      count(b.length);
      if (!res.write(b)) return void res.once('drain', pump);
    }
    res.end(tail);
    count(tail.length);
  };
  res.on('close', () => {
    left = 0;
  });
  pump();
}

function ctxFor(url: string, vars: Record<string, unknown> = {}): TestCtx {
  const t = makeCtx({ driver_info: { redfish_address: url, redfish_username: 'admin', redfish_password: 'pw' }, ...vars });
  open.push(() => t.close());
  return t;
}

describe('BMC response bodies are bounded', () => {
  it('a 200 MiB answer is refused after the default 16 MiB, without buffering the rest', async () => {
    const bmc = await bigBmc(200 * MIB, true);
    const t = ctxFor(bmc.url);
    const before = retained();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, heldNow());
    }, 10);
    const err = (await redfishPowerModule.run(t.ctx, { state: 'on' }).catch((e: unknown) => e)) as Error & { hint?: string };
    clearInterval(sampler);
    expect(err.message).toMatch(/larger than 16 MiB; tsbm stopped reading it/);
    expect(err.message).toContain('/redfish/v1/Systems/1');
    expect(err.hint).toMatch(/tsbm_max_redfish_body/);
    // The BMC got to send little more than the cap (socket buffers), not the 200 MiB.
    await new Promise((r) => setTimeout(r, 200));
    expect(bmc.sent()).toBeLessThan(40 * MIB);
    // Nor was it held: a whole 200 MiB body read as text is 200 MiB of Buffers plus the string.
    expect(peak - before).toBeLessThan(150 * MIB);
    expect(retained() - before).toBeLessThan(32 * MIB);
  });

  it('a Content-Length over the cap is refused before reading; the cap is raised with tsbm_max_redfish_body', async () => {
    const bmc = await bigBmc(3 * MIB, false);
    const small = ctxFor(bmc.url, { tsbm_max_redfish_body: '2MiB' });
    await expect(redfishPowerModule.run(small.ctx, { state: 'on' })).rejects.toThrow(/larger than 2 MiB/);
    const raised = ctxFor(bmc.url, { tsbm_max_redfish_body: '4MiB' });
    expect((await redfishPowerModule.run(raised.ctx, { state: 'on' })).power_state).toBe('On');
  });

  it('a cap that is not a size is an options error naming the variable', async () => {
    const bmc = await bigBmc(1024, false);
    const t = ctxFor(bmc.url, { tsbm_max_redfish_body: 'lots' });
    await expect(redfishPowerModule.run(t.ctx, { state: 'on' })).rejects.toThrow(/tsbm_max_redfish_body "lots" is not a size/);
  });
});
