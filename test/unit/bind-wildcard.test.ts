// "Never a wildcard" for the file server and the image mirror, decided on the parsed address:
// the literals 0.0.0.0 and :: were refused, while 0, 0x0, [::0] and friends bound every
// address. A name that resolves to the unspecified address is caught once bound.
import { describe, expect, it } from 'vitest';
import { isUnspecifiedAddress, parseBindAddress } from '../../src/http/bind-address.js';
import { startFileServer } from '../../src/http/file-server.js';
import { fileServerOptions } from '../../src/http/run-file-server.js';
import { imageMirrorFor } from '../../src/modules/bootc/image-mirror.js';
import { parseImageSource } from '../../src/module-api/image-ref.js';
import type { MirrorContext } from '../../src/modules/bootc/image-mirror.js';

const WILDCARDS = ['0.0.0.0', '0', '0x0', '0.0', '00', '000.0.0.0', '0x00000000', '0.0.0.0.', '::', '::0', '[::0]', '[::]', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0'];
const CONCRETE = ['127.0.0.1', '10.0.0.1', '0.0.0.1', '::1', 'fd00::1', 'controller.lab', 'localhost'];

function mirrorCtx(vars: Record<string, unknown>): MirrorContext {
  return {
    vars,
    host: 'node1',
    secret: (v) => v,
    warn: () => undefined,
    services: {
      playbookDir: '/',
      tmpDir: '/tmp',
      get: () => {
        throw new Error('nothing may start');
      },
      onClose: () => undefined,
    } as unknown as MirrorContext['services'],
  };
}

describe('the unspecified address, however it is spelled', () => {
  it('is recognised in every spelling the system binds as every address', () => {
    for (const w of WILDCARDS) expect([w, isUnspecifiedAddress(w)]).toEqual([w, true]);
    for (const c of CONCRETE) expect([c, isUnspecifiedAddress(c)]).toEqual([c, false]);
  });

  it('host:port and [v6]:port parse; a bare IPv6 address is a host', () => {
    expect(parseBindAddress('10.0.0.1:8080')).toEqual({ host: '10.0.0.1', port: 8080 });
    expect(parseBindAddress('[::0]:8080')).toEqual({ host: '::0', port: 8080 });
    expect(parseBindAddress('::0')).toEqual({ host: '::0' });
    expect(parseBindAddress('fd00::1')).toEqual({ host: 'fd00::1' });
    expect(parseBindAddress('a:b:c')).toBeUndefined();
  });

  it('tsbm_http_address refuses each spelling, with and without a port, and as a YAML number', () => {
    for (const w of WILDCARDS) {
      const v = w.includes(':') && !w.startsWith('[') ? `[${w}]:8080` : `${w}:8080`;
      expect(() => fileServerOptions({ tsbm_http_address: w }), w).toThrow(/tsbm_http_address .* is a wildcard/);
      expect(() => fileServerOptions({ tsbm_http_address: v }), v).toThrow(/is a wildcard/);
    }
    expect(() => fileServerOptions({ tsbm_http_address: 0 })).toThrow(/tsbm_http_address 0 is a wildcard/);
    expect(fileServerOptions({ tsbm_http_address: '[::1]:8080' })).toEqual({ host: '::1', port: 8080 });
  });

  it('image_mirror_address (and tsbm_http_address as its fallback) refuses each spelling before anything starts', () => {
    const img = parseImageSource('oci://registry.lab:5000/os/bootc:1');
    for (const w of WILDCARDS) {
      expect(() => imageMirrorFor(mirrorCtx({ image_mirror_address: w }), img, undefined, true), w).toThrow(/image_mirror_address .* is a wildcard/);
      expect(() => imageMirrorFor(mirrorCtx({ tsbm_http_address: w.startsWith('[') || !w.includes(':') ? `${w}:8080` : `[${w}]:8080` }), img, undefined, true), w).toThrow(
        /tsbm_http_address .* is a wildcard/,
      );
    }
  });

  it('the file server itself refuses an address that binds every address, and closes what it opened', async () => {
    // Not through fileServerOptions: the server checks the address it really bound.
    await expect(startFileServer({ host: '0' })).rejects.toThrow(/resolves to 0\.0\.0\.0, a wildcard/);
    const s = await startFileServer({ host: '127.0.0.1' });
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await s.close();
  });
});
