// The node store setting: --state, then $TSBM_STATE, then the project config file, then files
// in the lock directory; etcd endpoints, prefix, TTL, TLS files and the user, with one-line
// refusals (exit 5) for what does not parse.
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { freshRecord, parseRecord, stamp } from '../../src/nodes/record.js';
import { DEFAULT_ETCD_TTL, parseStoreSetting, resolveStoreSetting } from '../../src/nodes/setting.js';

const where = (env: NodeJS.ProcessEnv = {}) => ({ env, uid: 1000, home: '/home/op' });

describe('node store setting', () => {
  it('defaults to files in the lock directory (--lock-dir, TSBM_LOCK_DIR, per user)', () => {
    expect(resolveStoreSetting({ where: where() })).toEqual({ kind: 'files', dir: '/home/op/.local/state/tsbm/locks' });
    expect(resolveStoreSetting({ where: where({ TSBM_LOCK_DIR: '/env/locks' }) })).toEqual({ kind: 'files', dir: '/env/locks' });
    expect(resolveStoreSetting({ lockDir: '/flag', where: where() })).toEqual({ kind: 'files', dir: '/flag' });
    expect(resolveStoreSetting({ flag: 'files:/srv/state', lockDir: '/flag', where: where() })).toEqual({ kind: 'files', dir: '/srv/state' });
  });

  it('takes --state over TSBM_STATE over the config file', () => {
    const config = { value: 'etcd://cfg:2379', from: 'tsbm.cfg:3' };
    const env = where({ TSBM_STATE: 'etcd://env:2379' });
    expect(resolveStoreSetting({ flag: 'etcd://flag:2379', config, where: env })).toMatchObject({ endpoints: ['http://flag:2379'] });
    expect(resolveStoreSetting({ config, where: env })).toMatchObject({ endpoints: ['http://env:2379'] });
    expect(resolveStoreSetting({ config, where: where() })).toMatchObject({ endpoints: ['http://cfg:2379'] });
    // The origin is named in a refusal.
    expect(() => resolveStoreSetting({ config: { value: 'consul://x', from: 'tsbm.cfg:3' }, where: where() })).toThrow(/^tsbm\.cfg:3: "consul:\/\/x" is not a node store/);
  });

  it('parses etcd endpoints, prefix, TTL; etcds:// or a CA means TLS', () => {
    expect(parseStoreSetting('etcd://10.0.0.2:2379,10.0.0.3,[fd00::1]:2380', '--state', undefined, where())).toEqual({
      kind: 'etcd',
      endpoints: ['http://10.0.0.2:2379', 'http://10.0.0.3:2379', 'http://[fd00::1]:2380'],
      prefix: 'tsbm/',
      ttlSeconds: DEFAULT_ETCD_TTL,
    });
    expect(parseStoreSetting('etcd://e:1/fleet/eu/?ttl=10', '--state', undefined, where())).toMatchObject({ prefix: 'fleet/eu/', ttlSeconds: 10 });
    expect(parseStoreSetting('etcds://e:2379', '--state', undefined, where())).toMatchObject({ endpoints: ['https://e:2379'] });
    expect(parseStoreSetting('etcd://e:2379?cacert=/ca.pem&cert=/c.pem&key=/k.pem', '--state', undefined, where())).toMatchObject({
      endpoints: ['https://e:2379'],
      tls: { ca: '/ca.pem', cert: '/c.pem', key: '/k.pem' },
    });
    expect(parseStoreSetting('etcd://e', '--state', undefined, where({ TSBM_ETCD_CACERT: '/env-ca.pem' }))).toMatchObject({
      endpoints: ['https://e:2379'],
      tls: { ca: '/env-ca.pem' },
    });
  });

  it('takes the etcd user from the setting or env, the password only from TSBM_ETCD_PASSWORD', () => {
    expect(parseStoreSetting('etcd://e?user=tsbm', '--state', undefined, where({ TSBM_ETCD_PASSWORD: 'pw' }))).toMatchObject({ auth: { username: 'tsbm', password: 'pw' } });
    expect(() => parseStoreSetting('etcd://e?user=tsbm', '--state', undefined, where())).toThrow(/needs TSBM_ETCD_PASSWORD/);
    expect(() => parseStoreSetting('etcd://e?user=a&password=b', '--state', undefined, where())).toThrow(/unknown etcd option "password"/);
  });

  it.each([
    ['etcd://', /is not a node store/],
    ['etcd://host:99999', /is not an etcd HOST:PORT/],
    ['etcd://h?ttl=1', /ttl must be a whole number of seconds from 2 to 3600/],
    ['etcd://h?ttl=abc', /ttl must be/],
    ['etcd://h?colour=red', /unknown etcd option "colour"/],
    ['etcd://h?cert=/c.pem', /needs both cert and key/],
    ['files:', /files: needs a directory/],
    ['/var/lib/tsbm', /is not a node store/],
  ])('refuses %s with one line, exit 5', (text, message) => {
    let err: unknown;
    try {
      parseStoreSetting(text, '--state', undefined, where());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TsbmError);
    expect((err as TsbmError).exitCode).toBe(5);
    expect((err as TsbmError).oneLine()).toMatch(message);
    expect((err as TsbmError).oneLine()).not.toContain('\n');
  });
});

describe('node records', () => {
  it('a fresh record is unknown and unprotected; stamping sets version and time under the stored key', () => {
    const r = stamp('bmc:a:443', { ...freshRecord('bmc:a:443', 'node01'), key: 'other' }, undefined, 7);
    expect(r).toEqual({ key: 'bmc:a:443', name: 'node01', provisionState: 'unknown', protected: false, updated: 7, version: 1 });
    expect(stamp('bmc:a:443', r, r, 8).version).toBe(2);
  });

  it('a stored record that is not one tsbm wrote is refused naming where it is', () => {
    expect(() => parseRecord('{"key":"k"}', '/s/nodes/k.json')).toThrow(/the node record \/s\/nodes\/k\.json is not a record tsbm wrote/);
    expect(() => parseRecord('not json', 'k')).toThrow(TsbmError);
    expect(parseRecord(JSON.stringify({ key: 'k', name: 'n', provisionState: 'active', protected: false, version: 3, updated: 1 }), 'k').version).toBe(3);
  });
});
