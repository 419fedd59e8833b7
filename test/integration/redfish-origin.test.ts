// A BMC's links and headers never take its credentials to another origin: a tiny hostile BMC
// on loopback points its session login link and a 202 task monitor at a second server, which
// must receive nothing; the error names the node and the URL. redfish_allowed_origins opts in.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { endpointFromDriverInfo } from '../../src/redfish/endpoint.js';
import { makeCtx, type TestCtx } from './redfish-helpers.js';

const PASSWORD = 'Fleet-wide-S3cret';

interface Peer {
  url: string;
  port: number;
  seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  server: Server;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function serve(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<Peer> {
  const seen: Peer['seen'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const peer = { url: `http://127.0.0.1:${port}`, port, seen, server };
  open.push({ close: () => new Promise<void>((r) => server.close(() => r())) });
  server.on('connection', (s) => open.push({ close: async () => void s.destroy() }));
  return peer;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** A BMC with one System; `links` decides where its session link, session and task monitor point. */
async function hostileBmc(links: { sessions?: string; taskMonitor?: string; sessionLocation?: string }): Promise<Peer> {
  let power = 'Off';
  return serve((req, _body, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/redfish/v1/SessionService/Sessions' && req.method === 'POST')
      return json(res, 201, {}, { 'X-Auth-Token': 'bmc-token', Location: links.sessionLocation ?? '/redfish/v1/SessionService/Sessions/1' });
    if (path === '/redfish/v1/' || path === '/redfish/v1')
      return json(res, 200, {
        '@odata.id': '/redfish/v1/',
        Systems: { '@odata.id': '/redfish/v1/Systems' },
        ...(links.sessions ? { Links: { Sessions: { '@odata.id': links.sessions } } } : {}),
      });
    if (path === '/redfish/v1/Systems') return json(res, 200, { Members: [{ '@odata.id': '/redfish/v1/Systems/1' }] });
    if (path === '/redfish/v1/Systems/1')
      return json(res, 200, {
        '@odata.id': '/redfish/v1/Systems/1',
        Id: '1',
        PowerState: power,
        UUID: '11111111-2222-3333-4444-555555555555',
        Actions: { '#ComputerSystem.Reset': { target: '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset', 'ResetType@Redfish.AllowableValues': ['On', 'ForceOff'] } },
      });
    if (path === '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset' && req.method === 'POST') {
      power = 'On';
      if (links.taskMonitor) return json(res, 202, {}, { Location: links.taskMonitor });
      return json(res, 204, {});
    }
    return json(res, 404, {});
  });
}

function ctxFor(bmc: Peer, extra: Record<string, unknown> = {}): TestCtx {
  const t = makeCtx({
    driver_info: { redfish_address: bmc.url, redfish_username: 'admin', redfish_password: PASSWORD, ...extra },
  });
  open.push({ close: () => t.close() });
  return t;
}

describe('Redfish credentials stay at the BMC origin', () => {
  it('a session link to another server is refused: that server receives nothing, the error names node and URL', async () => {
    const thief = await serve((_req, _body, res) => json(res, 201, {}, { 'X-Auth-Token': 'stolen' }));
    const bmc = await hostileBmc({ sessions: `${thief.url}/redfish/v1/SessionService/Sessions` });
    const t = ctxFor(bmc);
    const err = (await redfishPowerModule.run(t.ctx, { state: 'on' }).catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toContain(`${thief.url}/redfish/v1/SessionService/Sessions`);
    expect(err.message).toContain('node1');
    expect(err.message).toMatch(/not its own origin/);
    expect(err.hint).toMatch(/redfish_allowed_origins/);
    expect(thief.seen).toEqual([]);
    // Nor did the password go anywhere else, or into what the task emitted.
    expect(bmc.seen.some((r) => r.body.includes(PASSWORD))).toBe(false);
    expect(err.message).not.toContain(PASSWORD);
  });

  it('a 202 Location at another server is not polled with the Basic header', async () => {
    const thief = await serve((_req, _body, res) => json(res, 200, { TaskState: 'Completed' }));
    // No session link: Basic auth, so every request carries the password.
    const bmc = await hostileBmc({ taskMonitor: `${thief.url}/redfish/v1/TaskService/Tasks/1` });
    const t = ctxFor(bmc);
    const err = (await redfishPowerModule.run(t.ctx, { state: 'on', timeout: 5 }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toContain(`${thief.url}/redfish/v1/TaskService/Tasks/1`);
    expect(err.message).toContain('node1');
    expect(thief.seen).toEqual([]);
    // The BMC itself did get the action, with its credentials.
    expect(bmc.seen.some((r) => r.method === 'POST' && typeof r.headers.authorization === 'string')).toBe(true);
  });

  it('a session Location at another server gets no DELETE with the token at logout', async () => {
    const thief = await serve((_req, _body, res) => json(res, 204, {}));
    const bmc = await hostileBmc({ sessions: '/redfish/v1/SessionService/Sessions', sessionLocation: `${thief.url}/redfish/v1/SessionService/Sessions/1` });
    const t = ctxFor(bmc);
    expect((await redfishPowerModule.run(t.ctx, { state: 'on' })).power_state).toBe('On');
    await t.close();
    expect(thief.seen).toEqual([]);
    expect(t.logs.some((l) => /logout on .* failed: .*not its own origin/.test(l.message))).toBe(true);
  });

  it('other schemes, ports and protocol-relative links are refused the same way', async () => {
    const thief = await serve((_req, _body, res) => json(res, 201, {}, { 'X-Auth-Token': 'x' }));
    const bmc = await hostileBmc({});
    for (const link of [
      `//127.0.0.1:${thief.port}/redfish/v1/SessionService/Sessions`,
      `HTTP://127.0.0.1:${thief.port}/x`,
      `https://127.0.0.1:${new URL(bmc.url).port}/x`, // same host and port, other scheme
    ]) {
      const other = await hostileBmc({ sessions: link });
      const t = ctxFor(other);
      await expect(redfishPowerModule.run(t.ctx, { state: 'on' })).rejects.toThrow(/not its own origin/);
    }
    expect(thief.seen).toEqual([]);
  });

  it('redfish_allowed_origins lets a BMC that really delegates reach the named origin', async () => {
    const delegate = await serve((_req, _body, res) => json(res, 201, {}, { 'X-Auth-Token': 'delegated-token' }));
    const bmc = await hostileBmc({ sessions: `${delegate.url}/redfish/v1/SessionService/Sessions` });
    const t = ctxFor(bmc, { redfish_allowed_origins: [delegate.url] });
    expect((await redfishPowerModule.run(t.ctx, { state: 'on' })).power_state).toBe('On');
    expect(delegate.seen[0]?.method).toBe('POST');
    expect(bmc.seen.some((r) => r.headers['x-auth-token'] === 'delegated-token')).toBe(true);
  });

  it('redfish_allowed_origins takes origins only', () => {
    const base = { redfish_address: 'https://bmc.example' };
    expect(endpointFromDriverInfo({ ...base, redfish_allowed_origins: 'https://a.example:8443, http://b.example' }).allowedOrigins).toEqual([
      'https://a.example:8443',
      'http://b.example',
    ]);
    expect(endpointFromDriverInfo(base).allowedOrigins).toEqual([]);
    expect(() => endpointFromDriverInfo({ ...base, redfish_allowed_origins: ['https://a.example/redfish'] })).toThrow(/not an origin/);
    expect(() => endpointFromDriverInfo({ ...base, redfish_allowed_origins: ['ftp://a.example'] })).toThrow(/not an origin/);
  });
});
