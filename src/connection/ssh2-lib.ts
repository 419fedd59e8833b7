// ssh2 is CommonJS: Node's ESM loader cannot see its named exports (vitest can, which hides the
// problem in tests). Every runtime use of ssh2 imports its values from here, so the two
// per-packet costs below (and the per-signature one in ssh2-keys.ts) are mended once for the
// runner and the lab alike.
import { createRequire } from 'node:module';
import type { Client as ClientType, Server as ServerType } from 'ssh2';
import type ssh2Module from 'ssh2';
import { pooledRandomFill } from '../util/pooled-random.js';
import { signWithKeyObjects } from './ssh2-keys.js';

const require = createRequire(import.meta.url);
const nodeCrypto: { randomFillSync: unknown } = require('node:crypto');

// ssh2 binds crypto.randomFillSync when it loads and calls it for every packet's padding.
// Loading it while that name points at the pool gives ssh2 (and only ssh2) pooled bytes.
const original = nodeCrypto.randomFillSync;
let ssh2: typeof ssh2Module;
try {
  nodeCrypto.randomFillSync = pooledRandomFill;
  ssh2 = require('ssh2');
} finally {
  nodeCrypto.randomFillSync = original;
}

interface ChannelLike {
  readonly writableFinished: boolean;
  close(): void;
}
// Channel.destroy() always calls end(). Streams auto-destroy after 'finish', and end() on a
// finished stream builds an ERR_STREAM_ALREADY_FINISHED error (stack trace and all) that
// nobody sees: once per command on each side. A finished channel only needs its close.
const { Channel } = require('ssh2/lib/Channel.js') as { Channel?: { prototype: ChannelLike & { destroy(): unknown } } };
if (Channel && typeof Channel.prototype.destroy === 'function') {
  const destroy = Channel.prototype.destroy;
  Channel.prototype.destroy = function (this: ChannelLike) {
    if (!this.writableFinished) return destroy.call(this);
    this.close();
    return this;
  };
}

// Any parsed key shows ssh2 where its keys' shared methods live (a fixed public key).
const sampleKey = ssh2.utils.parseKey('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINcAdhKyhUd+feVRd03/BhmJ1m3aZGdD6rCijtC7X2gL');
if (!(sampleKey instanceof Error) && !Array.isArray(sampleKey)) signWithKeyObjects(sampleKey);

export const { Client, Server, utils } = ssh2;
export type Client = ClientType;
export type Server = ServerType;
