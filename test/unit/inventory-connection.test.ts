import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { connectionSpecFor } from '../../src/inventory/connection-vars.js';
import { thrownBy } from '../helpers/thrown.js';

describe('connectionSpecFor', () => {
  it('defaults: address = name, port 22, current user, ssh, strict, 10 s', () => {
    expect(connectionSpecFor('node01', {})).toEqual({
      host: 'node01',
      connection: 'ssh',
      address: 'node01',
      port: 22,
      user: userInfo().username,
      hostKeyChecking: 'strict',
      connectTimeoutMs: 10_000,
    });
  });
  it('localhost and 127.0.0.1 default to local', () => {
    expect(connectionSpecFor('localhost', {}).connection).toBe('local');
    expect(connectionSpecFor('127.0.0.1', {}).connection).toBe('local');
    expect(connectionSpecFor('localhost', { ansible_host: '10.0.0.1' }).connection).toBe('ssh');
  });
  it('tsbm names', () => {
    const s = connectionSpecFor('n', {
      ssh_host: '10.0.0.9',
      ssh_port: '2222',
      ssh_user: 'core',
      ssh_private_key_file: '~/.ssh/id',
      ssh_password: 'pw',
      connection: 'ssh',
      ssh_known_hosts_file: '/k',
      ssh_host_key_fingerprint: 'SHA256:abc',
      ssh_host_key_checking: 'accept-new',
      ssh_jump: 'bastion',
      ssh_connect_timeout: 2.5,
    });
    expect(s).toMatchObject({
      address: '10.0.0.9',
      port: 2222,
      user: 'core',
      privateKeyFile: '~/.ssh/id',
      password: 'pw',
      knownHostsFile: '/k',
      hostKeyFingerprint: 'SHA256:abc',
      hostKeyChecking: 'accept-new',
      jump: 'bastion',
      connectTimeoutMs: 2500,
    });
  });
  it('Ansible aliases, and tsbm names win when both are set', () => {
    const a = connectionSpecFor('n', {
      ansible_host: '1.1.1.1',
      ansible_port: 23,
      ansible_user: 'ansible',
      ansible_ssh_private_key_file: '/a',
      ansible_ssh_pass: 'p',
      ansible_connection: 'local',
      ansible_ssh_common_args: '-o ProxyCommand=x',
    });
    expect(a).toMatchObject({
      address: '1.1.1.1',
      port: 23,
      user: 'ansible',
      privateKeyFile: '/a',
      password: 'p',
      connection: 'local',
    });
    expect(connectionSpecFor('n', { ansible_password: 'q' }).password).toBe('q');
    const both = connectionSpecFor('n', {
      ansible_host: '1.1.1.1',
      ssh_host: '2.2.2.2',
      ansible_user: 'a',
      ssh_user: 'b',
      ansible_port: 1,
      ssh_port: 2,
    });
    expect(both).toMatchObject({ address: '2.2.2.2', user: 'b', port: 2 });
  });
  it('bad values are errors that do not print passwords', () => {
    expect(() => connectionSpecFor('n', { ssh_port: 'abc' })).toThrow(TsbmError);
    expect(() => connectionSpecFor('n', { ssh_port: 70000 })).toThrow(/ssh_port/);
    expect(() => connectionSpecFor('n', { connection: 'winrm' })).toThrow(/"ssh" or "local"/);
    expect(() => connectionSpecFor('n', { ssh_host_key_checking: 'maybe' })).toThrow(/accept-new/);
    const e = thrownBy(() => connectionSpecFor('n', { ssh_password: { nested: 'topsecretvalue' } }));
    expect((e as Error).message).not.toContain('topsecretvalue');
  });
  it('ssh_transfer_method (and Ansible\'s ansible_ssh_transfer_method): smart, sftp, piped; scp means piped', () => {
    expect(connectionSpecFor('n', {}).transferMethod).toBeUndefined();
    for (const m of ['smart', 'sftp', 'piped'] as const) {
      expect(connectionSpecFor('n', { ssh_transfer_method: m }).transferMethod).toBe(m);
      expect(connectionSpecFor('n', { ansible_ssh_transfer_method: m }).transferMethod).toBe(m);
    }
    expect(connectionSpecFor('n', { ansible_ssh_transfer_method: 'scp' }).transferMethod).toBe('piped');
    expect(connectionSpecFor('n', { ssh_transfer_method: 'sftp', ansible_ssh_transfer_method: 'piped' }).transferMethod).toBe('sftp');
    expect(() => connectionSpecFor('n', { ssh_transfer_method: 'rsync' })).toThrow(
      /host n: ssh_transfer_method must be smart, sftp or piped, got "rsync"/,
    );
  });
});
