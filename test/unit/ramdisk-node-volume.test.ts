// The per-node volume's static network: Ironic's network_data as the lines the ramdisk's boot
// script applies, refusals named; and the call-home report as the controller reads it.
import { describe, expect, it } from 'vitest';
import { isoVolumeId, readIsoFiles } from '../../src/configdrive/iso9660-read.js';
import { parseAgentReport } from '../../src/http/agent-callbacks.js';
import { buildNodeVolume, networkConf } from '../../src/ramdisk/node-volume.js';

const ND = {
  links: [
    { id: 'eth0', type: 'phy', ethernet_mac_address: '52:54:00:AA:BB:01', mtu: 9000 },
    { id: 'eth1', type: 'phy', ethernet_mac_address: '52:54:00:aa:bb:02' },
  ],
  networks: [
    { id: 'n0', link: 'eth0', type: 'ipv4', ip_address: '10.0.0.5', netmask: '255.255.255.0', routes: [{ network: '0.0.0.0', netmask: '0.0.0.0', gateway: '10.0.0.1' }, { network: '192.168.0.0', netmask: '255.255.0.0', gateway: '10.0.0.2' }], dns_nameservers: ['10.0.0.53'] },
    { id: 'n1', link: 'eth0', type: 'ipv6', ip_address: '2001:db8::5/64', routes: [{ network: '::', netmask: '::', gateway: '2001:db8::1' }] },
    { id: 'n2', link: 'eth1', type: 'ipv4_dhcp' },
  ],
  services: [{ type: 'dns', address: '9.9.9.9' }],
};

describe('network_data for the ramdisk', () => {
  it('links by MAC, addresses with prefixes, routes (default for /0), DHCP links, DNS once each', () => {
    expect(networkConf(ND)).toBe(
      ['link 52:54:00:aa:bb:01 9000', 'link 52:54:00:aa:bb:02', 'addr 52:54:00:aa:bb:01 10.0.0.5/24', 'route 52:54:00:aa:bb:01 default 10.0.0.1', 'route 52:54:00:aa:bb:01 192.168.0.0/16 10.0.0.2', 'addr 52:54:00:aa:bb:01 2001:db8::5/64', 'route 52:54:00:aa:bb:01 default 2001:db8::1', 'dhcp 52:54:00:aa:bb:02', 'dns 10.0.0.53', 'dns 9.9.9.9', ''].join('\n'),
    );
  });

  it('refuses what the ramdisk cannot apply, by name', () => {
    expect(() => networkConf({ links: [{ id: 'b', type: 'bond', ethernet_mac_address: '52:54:00:00:00:01' }] })).toThrow(/network_data\.links\[0\] is a bond link; tsbm's ramdisk configures physical links only/);
    expect(() => networkConf({ links: [{ id: 'e', type: 'phy' }] })).toThrow(/links\[0\] has no ethernet_mac_address/);
    expect(() => networkConf({ links: [], networks: [{ link: 'x', type: 'ipv4', ip_address: '10.0.0.1', netmask: '255.0.0.0' }] })).toThrow(/networks\[0\] names link "x", which network_data\.links does not have/);
    expect(() => networkConf({ links: [{ id: 'e', ethernet_mac_address: '52:54:00:00:00:01' }], networks: [{ link: 'e', type: 'ipv4', ip_address: '10.0.0.1; reboot', netmask: '255.0.0.0' }] })).toThrow(/ip_address is "10\.0\.0\.1; reboot", not an address/);
    expect(() => networkConf({ links: [{ id: 'e', ethernet_mac_address: '52:54:00:00:00:01' }], networks: [{ link: 'e', type: 'ipv4', ip_address: '10.0.0.1', netmask: '255.0.255.0' }] })).toThrow(/not contiguous/);
  });

  it('the volume: label TSBM-NODE, the key, callback, token, network_data and its lines', () => {
    const iso = buildNodeVolume({ authorizedKeys: 'ssh-ed25519 AAAA ctl', callback: { url: 'http://10.0.0.1:8080/agent/abc', token: 'tok' }, networkData: ND });
    expect(isoVolumeId(iso)).toBe('TSBM-NODE');
    const files = new Map(readIsoFiles(iso).map((f) => [f.path, f.data.toString()]));
    expect([...files.keys()].sort()).toEqual(['authorized_keys', 'callback_url', 'network.conf', 'network_data.json', 'token']);
    expect(files.get('authorized_keys')).toBe('ssh-ed25519 AAAA ctl\n');
    expect(files.get('token')).toBe('tok');
    expect(JSON.parse(files.get('network_data.json')!)).toEqual(ND);
  });
});

describe('the call-home report', () => {
  const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINcAdhKyhUd+feVRd03/BhmJ1m3aZGdD6rCijtC7X2gL';
  const ipAddr = [
    { ifname: 'lo', link_type: 'loopback', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8, scope: 'host' }] },
    { ifname: 'eth0', link_type: 'ether', address: '52:54:00:AA:BB:01', addr_info: [{ family: 'inet6', local: '2001:db8::5', prefixlen: 64, scope: 'global' }, { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' }, { family: 'inet', local: '10.0.0.5', prefixlen: 24, scope: 'global' }] },
  ];
  it('global addresses, IPv4 first; MACs; keys as TYPE BASE64', () => {
    const r = parseAgentReport(JSON.stringify({ version: 1, system_uuid: 'abc-1', host_keys: [key], ip_addr: ipAddr }), '10.0.0.5');
    expect(r).toEqual({ from: '10.0.0.5', systemUuid: 'abc-1', hostKeys: [key], macs: ['52:54:00:aa:bb:01'], addresses: [
      { interface: 'eth0', mac: '52:54:00:aa:bb:01', family: 4, address: '10.0.0.5', prefix: 24 },
      { interface: 'eth0', mac: '52:54:00:aa:bb:01', family: 6, address: '2001:db8::5', prefix: 64 },
    ] });
  });
  it('says what is wrong with a report that is not one', () => {
    expect(parseAgentReport('{', 'x')).toBe('the body is not JSON');
    expect(parseAgentReport(JSON.stringify({ version: 1, host_keys: ['ssh-ed25519 not base64!'], ip_addr: [] }), 'x')).toBe('no SSH host key in the report');
    expect(parseAgentReport(JSON.stringify({ version: 1, host_keys: [key] }), 'x')).toBe('no ip_addr (ip -j addr) in the report');
  });
});
