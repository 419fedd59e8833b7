// ssh2 is CommonJS: Node's ESM loader cannot see its named exports (vitest can, which hides the
// problem in tests). Every runtime use of ssh2 imports its values from here.
import type { Client as ClientType, Server as ServerType } from 'ssh2';
import ssh2 from 'ssh2';

export const { Client, Server, utils } = ssh2;
export type Client = ClientType;
export type Server = ServerType;
