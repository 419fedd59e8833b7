// A lab node's identity as its BMC reports it: its own UUID and MACs, powered off (simulated
// nodes and VMs alike; the ramdisk's identity check compares against these).
import type { FakeBmcState } from '../bmc/state.js';

/** Two MACs per node, from its index: unique in a lab of up to 65535 nodes. */
export function nodeMacs(index: number): string[] {
  return [0, 1].map((port) => `52:54:00:${hex(index >> 8)}:${hex(index & 0xff)}:${hex(port + 0x10)}`);
}

function hex(n: number): string {
  return (n & 0xff).toString(16).padStart(2, '0');
}

export function personalizeSystem(state: FakeBmcState, systemPath: string, uuid: string, macs: string[]): void {
  const sys = state.systemAt(systemPath);
  sys.UUID = uuid;
  sys.PowerState = 'Off';
  let i = 0;
  for (const [path, body] of state.tree) {
    if (path.startsWith(`${systemPath}/EthernetInterfaces/`) && typeof body.MACAddress === 'string') {
      const mac = macs[i++ % macs.length]!;
      body.MACAddress = mac;
      if ('PermanentMACAddress' in body) body.PermanentMACAddress = mac;
    }
  }
}
