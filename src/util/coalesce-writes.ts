// ssh2 writes every SSH packet with its own socket write; a command's channel open, exec
// request, data, EOF and close then cost a syscall each, on both ends of the connection (and
// on loopback the sender also pays for the receiver's TCP processing). Corking the socket for
// the rest of the current tick turns a burst of packets into one writev, without delaying
// anything past the tick that produced it.
import type { Socket } from 'node:net';

const COALESCED = Symbol('tsbm.coalescedWrites');

export function coalesceWrites(sock: Socket): void {
  const marked = sock as Socket & { [COALESCED]?: true };
  if (marked[COALESCED]) return;
  marked[COALESCED] = true;
  const write = sock.write;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    sock.uncork();
  };
  sock.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    if (!corked && !sock.destroyed) {
      corked = true;
      sock.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  } as Socket['write'];
}
