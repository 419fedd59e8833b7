// The per-node volume the ramdisk reads at boot (label TSBM-NODE): the controller's public key,
// where and with which token to call home, and an optional static network, Ironic's
// network_data (OpenStack's network_data.json) as given plus the lines the ramdisk's boot script
// applies (network.conf: `link MAC [MTU]`, `addr MAC CIDR`, `route MAC CIDR GATEWAY`,
// `dhcp MAC`, `dns ADDRESS`). Small, made per node and run; it holds the node's token.
import { buildIso } from '../configdrive/iso9660.js';
import { NODE_VOLUME_LABEL } from './boot-files.js';

export interface NodeVolumeInput {
  authorizedKeys: string;
  callback?: { url: string; token: string };
  networkData?: unknown;
}

export class NetworkDataError extends Error {}

/** Fixed, so the same inputs give the same bytes. */
const DATE = new Date('2000-01-01T00:00:00Z');
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function prefixOf(netmask: unknown, family: 4 | 6, where: string): number {
  if (typeof netmask === 'number') return netmask;
  if (typeof netmask !== 'string' || !netmask) throw new NetworkDataError(`${where} has no netmask`);
  if (/^\d+$/.test(netmask)) return Number(netmask);
  if (family === 6) {
    const bits = netmask.split(':').filter(Boolean).map((h) => Number.parseInt(h, 16).toString(2).padStart(16, '0')).join('');
    return bits.replace(/0+$/, '').length;
  }
  const octets = netmask.split('.').map(Number);
  if (octets.length !== 4 || octets.some((o) => !(o >= 0 && o <= 255))) throw new NetworkDataError(`${where}: netmask ${netmask} is not a dotted IPv4 mask`);
  const bits = octets.map((o) => o.toString(2).padStart(8, '0')).join('');
  if (!/^1*0*$/.test(bits)) throw new NetworkDataError(`${where}: netmask ${netmask} is not contiguous`);
  return bits.indexOf('0') === -1 ? 32 : bits.indexOf('0');
}

const word = (v: unknown, where: string): string => {
  if (typeof v !== 'string' || !/^[0-9A-Za-z.:/-]+$/.test(v)) throw new NetworkDataError(`${where} is ${JSON.stringify(v)}, not an address`);
  return v;
};

/** network_data (Ironic's node field, OpenStack's format) as network.conf lines for the ramdisk. */
export function networkConf(nd: unknown): string {
  if (!isObj(nd)) throw new NetworkDataError('network_data is not a mapping (links, networks, services)');
  const links = Array.isArray(nd.links) ? nd.links : [];
  const macOf = new Map<string, string>();
  const lines: string[] = [];
  links.forEach((l, i) => {
    const where = `network_data.links[${i}]`;
    if (!isObj(l)) throw new NetworkDataError(`${where} is not a mapping`);
    const type = String(l.type ?? 'phy');
    if (!['phy', 'ethernet', 'ovs', 'bridge', 'tap', 'vif', 'hw_veb', 'dvs', 'vhostuser'].includes(type)) {
      throw new NetworkDataError(`${where} is a ${type} link; tsbm's ramdisk configures physical links only (no bonds or VLANs)`);
    }
    const mac = String(l.ethernet_mac_address ?? '').toLowerCase();
    if (!MAC.test(mac)) throw new NetworkDataError(`${where} has no ethernet_mac_address (the ramdisk finds the interface by it)`);
    macOf.set(String(l.id), mac);
    lines.push(`link ${mac}${typeof l.mtu === 'number' ? ` ${l.mtu}` : ''}`);
  });
  const dns = new Set<string>();
  (Array.isArray(nd.networks) ? nd.networks : []).forEach((n, i) => {
    const where = `network_data.networks[${i}]`;
    if (!isObj(n)) throw new NetworkDataError(`${where} is not a mapping`);
    const mac = macOf.get(String(n.link));
    if (!mac) throw new NetworkDataError(`${where} names link ${JSON.stringify(n.link)}, which network_data.links does not have`);
    const type = String(n.type ?? '');
    if (type === 'ipv4_dhcp' || type === 'ipv6_dhcp' || type === 'ipv6_slaac' || type === 'ipv6_dhcpv6-stateless' || type === 'ipv6_dhcpv6-stateful') {
      if (type === 'ipv4_dhcp') lines.push(`dhcp ${mac}`);
      return;
    }
    if (type !== 'ipv4' && type !== 'ipv6') throw new NetworkDataError(`${where} has type ${JSON.stringify(n.type)}; tsbm's ramdisk knows ipv4, ipv6, ipv4_dhcp and ipv6_slaac`);
    const family = type === 'ipv4' ? 4 : 6;
    const ip = word(n.ip_address, `${where}.ip_address`);
    lines.push(`addr ${mac} ${ip.includes('/') ? ip : `${ip}/${prefixOf(n.netmask, family, where)}`}`);
    (Array.isArray(n.routes) ? n.routes : []).forEach((r, j) => {
      const rw = `${where}.routes[${j}]`;
      if (!isObj(r)) throw new NetworkDataError(`${rw} is not a mapping`);
      const net = word(r.network, `${rw}.network`);
      const prefix = prefixOf(r.netmask, family, rw);
      const dest = prefix === 0 ? 'default' : `${net}/${prefix}`;
      lines.push(`route ${mac} ${dest} ${word(r.gateway, `${rw}.gateway`)}`);
    });
    for (const d of Array.isArray(n.dns_nameservers) ? n.dns_nameservers : []) dns.add(word(d, `${where}.dns_nameservers`));
  });
  for (const s of Array.isArray(nd.services) ? nd.services : []) if (isObj(s) && s.type === 'dns') dns.add(word(s.address, 'network_data.services[].address'));
  for (const d of dns) lines.push(`dns ${d}`);
  return lines.length ? `${lines.join('\n')}\n` : '';
}

export function buildNodeVolume(i: NodeVolumeInput): Buffer {
  const files: { path: string; data: Buffer }[] = [{ path: 'authorized_keys', data: Buffer.from(i.authorizedKeys.endsWith('\n') ? i.authorizedKeys : `${i.authorizedKeys}\n`) }];
  if (i.callback) {
    files.push({ path: 'callback_url', data: Buffer.from(`${i.callback.url}\n`) });
    files.push({ path: 'token', data: Buffer.from(i.callback.token) });
  }
  if (i.networkData !== undefined) {
    files.push({ path: 'network_data.json', data: Buffer.from(`${JSON.stringify(i.networkData, null, 2)}\n`) });
    files.push({ path: 'network.conf', data: Buffer.from(networkConf(i.networkData)) });
  }
  return buildIso(files, { volumeId: NODE_VOLUME_LABEL, date: DATE, publisher: 'tsbm' });
}
