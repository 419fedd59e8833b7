// Pure Redfish decisions: ResetType and boot target choice, firmware list repair, endpoint
// parsing, error text, the ETag retry sequence, task-monitor following, byte ranges, $expand.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRange } from '../../src/http/file-server.js';
import { fileServerOptions, isLoopback } from '../../src/http/run-file-server.js';
import { chooseBootTarget, planBoot } from '../../src/redfish/boot.js';
import { endpointFromDriverInfo, parseVerifyCa } from '../../src/redfish/endpoint.js';
import { errorMessages, extendedInfo, RedfishError } from '../../src/redfish/errors.js';
import { expandQueryFor, isExpandedMember } from '../../src/redfish/expand.js';
import { patchWithEtag } from '../../src/redfish/etag.js';
import { chooseResetType } from '../../src/redfish/power.js';
import { isRedundantPowerConflict } from '../../src/redfish/quirks/idrac-redundant-power.js';
import { hpeOemMediaTargets } from '../../src/redfish/quirks/hpe-oem-virtual-media.js';
import { repairResetTypes } from '../../src/redfish/quirks/supermicro-reset-types.js';
import { followTask, TaskMonitorTimeout } from '../../src/redfish/task-monitor.js';
import type { RedfishResponse } from '../../src/redfish/transport.js';
import { insertBody } from '../../src/redfish/virtual-media.js';
import type { MediaSlot } from '../../src/redfish/discovery.js';
import { FaultInjector } from '../../packages/lab/src/bmc/faults.js';

const res = (status: number, body?: Record<string, unknown>, headers: Record<string, string> = {}): RedfishResponse => ({ status, headers, body });

describe('chooseResetType', () => {
  it('prefers the graceful type and falls back to force when it is not offered', () => {
    expect(chooseResetType('graceful_off', ['On', 'ForceOff', 'GracefulShutdown'])).toEqual({ type: 'GracefulShutdown', fallback: false });
    expect(chooseResetType('graceful_off', ['On', 'ForceOff'])).toEqual({ type: 'ForceOff', fallback: true });
    expect(chooseResetType('cycle', ['On', 'ForceOff', 'ForceRestart'])).toEqual({ type: 'ForceRestart', fallback: true });
    expect(chooseResetType('on', ['ForceOn', 'ForceOff'])).toEqual({ type: 'ForceOn', fallback: true });
    expect(chooseResetType('nmi', ['On', 'ForceOff'])).toBeUndefined();
    expect(chooseResetType('off', undefined)).toEqual({ type: 'ForceOff', fallback: false });
  });
});

describe('repairResetTypes (Supermicro)', () => {
  it('splits the glued value into the real names', () => {
    expect(repairResetTypes(['On', 'ForceOff', 'GracefulShutdownGracefulRestart', 'ForceRestart', 'Nmi', 'ForceOn'])).toEqual([
      'On', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'Nmi', 'ForceOn',
    ]);
    expect(repairResetTypes(['Bogus'])).toEqual([]);
  });
});

describe('boot target', () => {
  it('uses UsbCd only where Cd is not offered', () => {
    expect(chooseBootTarget('cd', ['None', 'Cd', 'UsbCd'])).toBe('Cd');
    expect(chooseBootTarget('cd', ['None', 'UsbCd', 'Hdd'])).toBe('UsbCd');
    expect(chooseBootTarget('disk', undefined)).toBe('Hdd');
    expect(chooseBootTarget('pxe', ['Hdd'])).toBeUndefined();
  });

  it('patches only what differs, and the mode only when it must change', () => {
    const sys = { path: '/s', etag: undefined, body: { Boot: { BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Once', BootSourceOverrideMode: 'UEFI' } } };
    expect(planBoot('b', sys, { device: 'cd', persistent: false, mode: 'UEFI' }).patch).toBeUndefined();
    expect(planBoot('b', sys, { device: 'cd', persistent: false, mode: 'Legacy' }).patch).toEqual({ BootSourceOverrideMode: 'Legacy' });
    expect(planBoot('b', sys, { device: 'disk', persistent: true }).patch).toEqual({ BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' });
    const limited = { path: '/s', etag: undefined, body: { Boot: { BootSourceOverrideMode: 'UEFI', 'BootSourceOverrideMode@Redfish.AllowableValues': ['UEFI'] } } };
    expect(() => planBoot('b', limited, { device: 'cd', persistent: false, mode: 'Legacy' })).toThrow(/does not offer boot mode Legacy/);
  });

  it('device none clears the override: Disabled (and target None where offered), nothing when already clear', () => {
    const sys = (boot: Record<string, unknown>) => ({ path: '/s', etag: undefined, body: { Boot: boot } });
    const hdd = sys({ BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' });
    expect(planBoot('b', hdd, { device: 'none', persistent: false }).patch).toEqual({ BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideTarget: 'None' });
    const noNone = sys({ BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Once', 'BootSourceOverrideTarget@Redfish.AllowableValues': ['Cd', 'Hdd'] });
    // A BMC whose list lacks None wants a target with Disabled (sushy-tools refuses a bare one): Hdd where listed, else the current one.
    expect(planBoot('b', noNone, { device: 'none', persistent: false }).patch).toEqual({ BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideTarget: 'Hdd' });
    const cdOnly = sys({ BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Continuous', 'BootSourceOverrideTarget@Redfish.AllowableValues': ['Cd', 'Pxe'] });
    expect(planBoot('b', cdOnly, { device: 'none', persistent: false }).patch).toEqual({ BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideTarget: 'Cd' });
    expect(planBoot('b', sys({ BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Disabled' }), { device: 'none', persistent: false }).patch).toBeUndefined();
    expect(planBoot('b', sys({ BootSourceOverrideTarget: 'None' }), { device: 'none', persistent: false }).patch).toBeUndefined();
  });
});

describe('endpoint', () => {
  it('reads Ironic driver_info; a bare host means https', () => {
    const e = endpointFromDriverInfo({ redfish_address: 'bmc.example:8443', redfish_username: 'u', redfish_password: 'p', redfish_verify_ca: 'False' });
    expect(e).toMatchObject({ baseUrl: 'https://bmc.example:8443', bmc: 'bmc.example:8443', verifyCa: false });
    expect(endpointFromDriverInfo({ redfish_address: 'https://10.0.0.5/' }).baseUrl).toBe('https://10.0.0.5');
    expect(() => endpointFromDriverInfo({})).toThrow(/redfish_address is not set/);
    expect(() => endpointFromDriverInfo({ redfish_address: 'ftp://x' })).toThrow(/not supported/);
  });

  it('verify_ca: true by default, booleans and strings, or a path', () => {
    expect(parseVerifyCa(undefined)).toBe(true);
    expect(parseVerifyCa('yes')).toBe(true);
    expect(parseVerifyCa(false)).toBe(false);
    expect(parseVerifyCa('/etc/ca.pem')).toBe('/etc/ca.pem');
  });
});

describe('errors', () => {
  it('carries ExtendedInfo text, status, method, URL and BMC, and the resolution as hint', () => {
    const body = { error: { code: 'x', message: 'general', '@Message.ExtendedInfo': [{ MessageId: 'Base.1.8.PropertyNotWritable', Message: 'PowerState is read only.', Resolution: 'Remove it.' }] } };
    const e = new RedfishError('failed', { status: 400, method: 'PATCH', url: 'https://b/redfish/v1/Systems/1', bmc: 'b', messages: extendedInfo(body) });
    expect(e.message).toBe('Redfish PATCH https://b/redfish/v1/Systems/1 on BMC b failed (HTTP 400): PowerState is read only.');
    expect(e.hint).toBe('Remove it.');
    expect(e.mentions(/PropertyNotWritable/)).toBe(true);
    expect(extendedInfo({ error: { message: 'only this' } })).toEqual([{ message: 'only this' }]);
  });

  it("shows what the BMC said whatever the body's content type: an id-only ExtendedInfo, plain text, HTML", () => {
    const idOnly = { error: { code: 'Base.1.0.GeneralError', message: 'no device for None', '@Message.ExtendedInfo': [{ MessageId: 'Base.1.0.GeneralError' }] } };
    expect(errorMessages({ body: idOnly })).toEqual([{ message: 'no device for None', id: 'Base.1.0.GeneralError' }]);
    expect(errorMessages({ body: undefined, text: 'Missing the target element\n' })).toEqual([{ message: 'Missing the target element' }]);
    const html = '<html><head><style>p{}</style></head><body><h1>400 Bad Request</h1><p>Boot needs a target</p></body></html>';
    expect(errorMessages({ body: undefined, text: html })).toEqual([{ message: '400 Bad Request Boot needs a target' }]);
    expect(errorMessages({ body: undefined, text: 'x'.repeat(1000) })[0]!.message).toHaveLength(301);
    expect(errorMessages({ body: undefined })).toEqual([]);
  });

  it('iDRAC 409 on a redundant power change is recognised; other 409s are not', () => {
    const mk = (status: number, message: string) => new RedfishError('failed', { status, method: 'POST', url: 'u', bmc: 'b', messages: [{ message }] });
    expect(isRedundantPowerConflict(mk(409, 'Server is already powered ON.'), 'On')).toBe(true);
    expect(isRedundantPowerConflict(mk(409, 'Server is already powered ON.'), 'ForceRestart')).toBe(false);
    expect(isRedundantPowerConflict(mk(409, 'A job is running'), 'On')).toBe(false);
    expect(isRedundantPowerConflict(mk(400, 'already on'), 'On')).toBe(false);
  });
});

describe('patchWithEtag', () => {
  function io(statuses: number[], etags: (string | undefined)[]) {
    const calls: Record<string, string>[] = [];
    return {
      calls,
      io: {
        etagOf: async () => etags.shift(),
        patch: async (_p: string, _b: unknown, h: Record<string, string>) => {
          calls.push(h);
          return res(statuses.shift() ?? 200);
        },
        log: () => {},
      },
    };
  }

  it('sends If-Match when the resource has an ETag, none otherwise', async () => {
    const a = io([200], ['W/"1"']);
    await patchWithEtag(a.io, '/x', {});
    expect(a.calls).toEqual([{ 'If-Match': 'W/"1"' }]);
    const b = io([200], [undefined]);
    await patchWithEtag(b.io, '/x', {});
    expect(b.calls).toEqual([{}]);
  });

  it('on 412 re-reads and retries once, then retries without If-Match', async () => {
    const a = io([412, 200], ['"1"', '"2"']);
    expect((await patchWithEtag(a.io, '/x', {})).status).toBe(200);
    expect(a.calls).toEqual([{ 'If-Match': '"1"' }, { 'If-Match': '"2"' }]);
    const b = io([412, 412, 204], ['"1"', '"2"']);
    expect((await patchWithEtag(b.io, '/x', {})).status).toBe(204);
    expect(b.calls).toEqual([{ 'If-Match': '"1"' }, { 'If-Match': '"2"' }, {}]);
  });
});

describe('followTask', () => {
  it('polls while 202 honouring Retry-After and returns the final answer', async () => {
    const answers = [res(202, {}, { 'retry-after': '0' }), res(202, { PercentComplete: 50 }), res(200, { TaskState: 'Completed' })];
    const progress: string[] = [];
    const final = await followTask({ get: async () => answers.shift() ?? res(500), onProgress: (m) => progress.push(m) }, '/tm/1', 10_000, 60);
    expect(final.status).toBe(200);
    expect(progress).toEqual(['task /tm/1 running', 'task /tm/1 running (50%)']);
  });

  it('a task ending in Exception reads as a failure, and a stuck one times out', async () => {
    expect((await followTask({ get: async () => res(200, { TaskState: 'Exception' }) }, '/tm/2', 1000)).status).toBe(500);
    await expect(followTask({ get: async () => res(202, {}, { 'retry-after': '1' }) }, '/tm/3', 200, 100)).rejects.toBeInstanceOf(TaskMonitorTimeout);
  });
});

describe('virtual media details', () => {
  const slot = (allowable: Record<string, string[]>): MediaSlot => ({ path: '/vm/2', body: {}, etag: undefined, insert: { name: '#VirtualMedia.InsertMedia', target: '/t', allowable }, eject: undefined, oem: {} });
  it('sends TransferProtocolType/TransferMethod only when the BMC lists them', () => {
    expect(insertBody(slot({}), 'http://h/a.iso')).toEqual({ Image: 'http://h/a.iso', Inserted: true, WriteProtected: true });
    expect(insertBody(slot({ TransferProtocolType: ['HTTP', 'HTTPS'], TransferMethod: ['Stream'] }), 'https://h/a.iso')).toMatchObject({ TransferProtocolType: 'HTTPS', TransferMethod: 'Stream' });
    expect(() => insertBody(slot({ TransferProtocolType: ['NFS'] }), 'http://h/a.iso')).toThrow(/accepts virtual media over NFS, not HTTP/);
  });

  it('finds HPE OEM media actions', () => {
    const body = { Oem: { Hpe: { Actions: { '#HpeiLOVirtualMedia.InsertVirtualMedia': { target: '/i' }, '#HpeiLOVirtualMedia.EjectVirtualMedia': { target: '/e' } } } } };
    expect(hpeOemMediaTargets(body)).toEqual({ insert: '/i', eject: '/e' });
    expect(hpeOemMediaTargets({})).toEqual({});
  });
});

describe('file server options and ranges', () => {
  it('reads tsbm_http_address and tsbm_http_port', () => {
    expect(fileServerOptions({})).toEqual({ host: '127.0.0.1', port: 0 });
    expect(fileServerOptions({ tsbm_http_address: '192.0.2.1:8080' })).toEqual({ host: '192.0.2.1', port: 8080 });
    expect(fileServerOptions({ tsbm_http_address: '[fd00::1]', tsbm_http_port: 9000 })).toEqual({ host: 'fd00::1', port: 9000 });
    expect(() => fileServerOptions({ tsbm_http_port: 'x' })).toThrow(/not a port number/);
    expect(() => fileServerOptions({ tsbm_http_address: '0.0.0.0:8080' })).toThrow(/is a wildcard/);
    expect([isLoopback('127.0.0.1'), isLoopback('::1'), isLoopback('10.0.0.1')]).toEqual([true, true, false]);
  });

  it('any satisfiable range lies inside the file', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.nat(12_000), fc.nat(12_000), (size, a, b) => {
        const r = parseRange(`bytes=${a}-${b}`, size);
        if (a >= size || a > b) return r === 'invalid';
        return r !== 'invalid' && r !== undefined && r.start === a && r.end === Math.min(b, size - 1);
      }),
    );
    expect(parseRange('bytes=0-1,5-6', 10)).toBeUndefined();
    expect(parseRange('bytes=-0', 10)).toBe('invalid');
  });
});

describe('fault injector', () => {
  it('is deterministic for a seed and honours first-N counts', () => {
    const seq = (seed: number) => {
      const f = new FaultInjector({ rate503: 0.3, resetRate: 0.2, seed });
      return Array.from({ length: 50 }, () => f.next());
    };
    expect(seq(3)).toEqual(seq(3));
    const f = new FaultInjector({ first503: 2, firstResets: 1 });
    expect([f.next(), f.next(), f.next(), f.next()]).toEqual(['503', '503', 'reset', 'ok']);
  });
});

describe('$expand decision', () => {
  const withEq = (ExpandQuery: Record<string, unknown>) => ({ ProtocolFeaturesSupported: { ExpandQuery } });

  it('follows what the captured service roots advertise', () => {
    // ExpandQuery as in the shared mockups' service roots.
    const hpeIlo5 = withEq({ ExpandAll: false, Levels: true, Links: false, MaxLevels: 1, NoLinks: true });
    const dmtf = withEq({ ExpandAll: true, Levels: true, MaxLevels: 6, Links: true, NoLinks: true });
    const idrac = withEq({ ExpandAll: true, Levels: true, Links: true, MaxLevels: 1, NoLinks: true });
    const openbmc = withEq({ ExpandAll: false, Levels: false, Links: false, NoLinks: false });
    for (const r of [hpeIlo5, dmtf, idrac]) expect(expandQueryFor(r)).toBe('?$expand=.($levels=1)');
    expect(expandQueryFor(openbmc)).toBeUndefined();
  });

  it('needs Levels, NoLinks (`.`) or else ExpandAll (`*`), and MaxLevels of at least 1 when given', () => {
    expect(expandQueryFor({})).toBeUndefined();
    expect(expandQueryFor({ ProtocolFeaturesSupported: {} })).toBeUndefined();
    expect(expandQueryFor(withEq({ Levels: false, NoLinks: true, ExpandAll: true }))).toBeUndefined();
    expect(expandQueryFor(withEq({ Levels: true, NoLinks: false, ExpandAll: false, Links: true }))).toBeUndefined();
    expect(expandQueryFor(withEq({ Levels: true, ExpandAll: true }))).toBe('?$expand=*($levels=1)');
    expect(expandQueryFor(withEq({ Levels: true, NoLinks: true }))).toBe('?$expand=.($levels=1)');
    expect(expandQueryFor(withEq({ Levels: true, NoLinks: true, MaxLevels: 0 }))).toBeUndefined();
    expect(expandQueryFor(withEq({ Levels: 'true', NoLinks: true }))).toBeUndefined();
  });

  it('a member is expanded when it carries more than its @odata.id', () => {
    expect(isExpandedMember({ '@odata.id': '/x' })).toBe(false);
    expect(isExpandedMember({ '@odata.id': '/x', Id: 'x' })).toBe(true);
    expect(isExpandedMember('/x')).toBe(false);
    expect(isExpandedMember(null)).toBe(false);
  });
});
