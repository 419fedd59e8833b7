// Jump host chains: `user@host:port[,user@host:port...]`, like OpenSSH's ProxyJump.
import { optionsError } from '../errors.js';

export interface JumpHop {
  user?: string;
  address: string;
  port: number;
}

export function parseJump(jump: string): JumpHop[] {
  return jump
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((hop) => {
      const m = /^(?:([^@]+)@)?(\[[^\]]+\]|[^:@]+)(?::(\d+))?$/.exec(hop);
      if (!m) throw optionsError(`bad jump host "${hop}"`, 'write ssh_jump as user@host:port, comma-separated for a chain');
      const port = m[3] ? Number(m[3]) : 22;
      if (port < 1 || port > 65535) throw optionsError(`bad port in jump host "${hop}"`);
      return { ...(m[1] ? { user: m[1] } : {}), address: m[2]!.replace(/^\[|\]$/g, ''), port };
    });
}
