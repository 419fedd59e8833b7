// The one remote command behind `facts`: a POSIX sh script printing tagged sections. Missing
// tools leave their section empty; parsing turns the sections into typed facts.

export const FACTS_SCRIPT = `sec() { printf '\\n@@tsbm:%s\\n' "$1"; }
sec hostname; hostname 2>/dev/null || cat /proc/sys/kernel/hostname 2>/dev/null
sec uname; uname -srm 2>/dev/null
sec os; cat /etc/os-release 2>/dev/null
sec meminfo; grep -E '^(MemTotal|MemAvailable|SwapTotal):' /proc/meminfo 2>/dev/null
sec nproc; nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null
sec cpumodel; grep -m1 -E '^model name' /proc/cpuinfo 2>/dev/null
sec lsblk; lsblk -J -b -O 2>/dev/null
sec ip; ip -j addr 2>/dev/null
sec uuid; cat /sys/class/dmi/id/product_uuid 2>/dev/null
sec selinux; if command -v getenforce >/dev/null 2>&1; then getenforce 2>/dev/null; fi
sec podman; if command -v podman >/dev/null 2>&1; then podman --version 2>/dev/null; fi
sec end
exit 0`;

interface Interface {
  name: string;
  mac?: string;
  state?: string;
  mtu?: number;
  ipv4: string[];
  ipv6: string[];
}

export interface Facts {
  hostname?: string;
  kernel?: string;
  architecture?: string;
  os?: { id?: string; version_id?: string; name?: string; pretty_name?: string };
  memory: { total_mb?: number; available_mb?: number; total_bytes?: number; available_bytes?: number; swap_total_mb?: number };
  processor_count?: number;
  processor_model?: string;
  /** lsblk's blockdevices, as lsblk -J -b -O reports them. */
  disks: Record<string, unknown>[];
  interfaces: Interface[];
  macs: string[];
  system_uuid?: string;
  selinux: { status: 'enabled' | 'disabled'; mode: string };
  podman_version?: string;
}

function splitSections(out: string): Map<string, string> {
  const m = new Map<string, string>();
  const parts = out.split(/\n@@tsbm:([a-z]+)\n/);
  for (let i = 1; i + 1 < parts.length; i += 2) m.set(parts[i]!, parts[i + 1]!.trim());
  return m;
}

function json(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function kb(meminfo: string, key: string): number | undefined {
  const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, 'm').exec(meminfo);
  return m ? Number(m[1]) * 1024 : undefined;
}

interface IpAddr {
  ifname?: string;
  address?: string;
  operstate?: string;
  mtu?: number;
  link_type?: string;
  addr_info?: { family?: string; local?: string; prefixlen?: number }[];
}

export function parseFacts(out: string): Facts {
  const s = splitSections(out);
  const get = (k: string) => s.get(k) || undefined;
  const uname = get('uname')?.split(/\s+/);
  const os: Facts['os'] = {};
  for (const line of (get('os') ?? '').split('\n')) {
    const m = /^([A-Z_]+)=("?)(.*)\2$/.exec(line.trim());
    if (!m) continue;
    const v = m[3]!;
    if (m[1] === 'ID') os.id = v;
    if (m[1] === 'VERSION_ID') os.version_id = v;
    if (m[1] === 'NAME') os.name = v;
    if (m[1] === 'PRETTY_NAME') os.pretty_name = v;
  }
  const mem = get('meminfo') ?? '';
  const total = kb(mem, 'MemTotal');
  const avail = kb(mem, 'MemAvailable');
  const swap = kb(mem, 'SwapTotal');
  const mb = (b: number | undefined) => (b === undefined ? undefined : Math.floor(b / 1048576));
  const lsblk = json(get('lsblk')) as { blockdevices?: Record<string, unknown>[] } | undefined;
  const ip = json(get('ip')) as IpAddr[] | undefined;
  const interfaces: Interface[] = (Array.isArray(ip) ? ip : []).map((i) => ({
    name: i.ifname ?? '',
    ...(i.address && i.link_type !== 'loopback' ? { mac: i.address.toLowerCase() } : {}),
    ...(i.operstate ? { state: i.operstate } : {}),
    ...(i.mtu !== undefined ? { mtu: i.mtu } : {}),
    ipv4: (i.addr_info ?? []).filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`),
    ipv6: (i.addr_info ?? []).filter((a) => a.family === 'inet6').map((a) => `${a.local}/${a.prefixlen}`),
  }));
  const selinux = get('selinux')?.toLowerCase();
  const podman = /version\s+(\S+)/i.exec(get('podman') ?? '');
  const nproc = Number(get('nproc'));
  const uuid = get('uuid')?.toLowerCase();
  return {
    ...(get('hostname') ? { hostname: get('hostname') } : {}),
    ...(uname?.[1] ? { kernel: uname[1] } : {}),
    ...(uname?.[2] ? { architecture: uname[2] } : {}),
    os,
    memory: {
      ...(total !== undefined ? { total_bytes: total, total_mb: mb(total) } : {}),
      ...(avail !== undefined ? { available_bytes: avail, available_mb: mb(avail) } : {}),
      ...(swap !== undefined ? { swap_total_mb: mb(swap) } : {}),
    },
    ...(Number.isFinite(nproc) && nproc > 0 ? { processor_count: nproc } : {}),
    ...(get('cpumodel') ? { processor_model: get('cpumodel')!.replace(/^model name\s*:\s*/, '') } : {}),
    disks: lsblk?.blockdevices ?? [],
    interfaces,
    macs: interfaces.flatMap((i) => (i.mac && i.mac !== '00:00:00:00:00:00' ? [i.mac] : [])),
    ...(uuid ? { system_uuid: uuid } : {}),
    selinux: selinux && selinux !== 'disabled' ? { status: 'enabled', mode: selinux } : { status: 'disabled', mode: 'disabled' },
    ...(podman ? { podman_version: podman[1] } : {}),
  };
}
