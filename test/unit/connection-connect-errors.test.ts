// What an operator reads when an SSH connection cannot be made: each socket or ssh2 failure
// says what happened to which address, and what to check.
import { describe, expect, it } from 'vitest';
import { describeConnectError } from '../../src/connection/ssh-connect-errors.js';

const hop = { address: '10.0.0.7', port: 22, user: 'root' };
const err = (message: string, extra: { code?: string; level?: string } = {}) => Object.assign(new Error(message), extra);

describe('describeConnectError', () => {
  it('a host that drops the connection mid-handshake (EPIPE, ECONNRESET) says so, like a plain close', () => {
    for (const [code, message] of [['EPIPE', 'write EPIPE'], ['ECONNRESET', 'read ECONNRESET']] as const) {
      const d = describeConnectError(err(message, { code }), hop);
      expect(d.message).toBe(`10.0.0.7:22 closed the connection during the SSH handshake (${message})`);
      expect(d.hint).toMatch(/MaxStartups/);
    }
  });

  it('refused, unroutable, unresolvable, timed out, refused login, and anything else', () => {
    expect(describeConnectError(err('x', { code: 'ECONNREFUSED' }), hop).message).toBe('connection refused by 10.0.0.7:22');
    expect(describeConnectError(err('x', { code: 'EHOSTUNREACH' }), hop).message).toBe('no route to 10.0.0.7:22');
    expect(describeConnectError(err('x', { code: 'ENOTFOUND' }), hop).message).toBe('cannot resolve 10.0.0.7');
    expect(describeConnectError(err('Timed out while waiting for handshake'), hop).message).toBe('timed out connecting to 10.0.0.7:22');
    expect(describeConnectError(err('All configured authentication methods failed', { level: 'client-authentication' }), hop).message).toBe(
      'authentication as root to 10.0.0.7:22 failed',
    );
    expect(describeConnectError(err('Unsupported protocol version'), hop).message).toBe('cannot connect to 10.0.0.7:22: Unsupported protocol version');
  });
});
