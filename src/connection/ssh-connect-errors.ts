// What a failed SSH connect means to an operator: ssh2's and the socket's errors as a message
// naming the host and a hint at what to do.

/** One step of a connection: a jump host or the target. */
export interface Hop {
  label: string;
  address: string;
  port: number;
  user: string;
}

export const HANDSHAKE_DROPPED_HINT =
  'the host or something in between dropped it (sshd going down, MaxStartups, a firewall); try again';

// Maps ssh2/socket errors to what an operator can act on.
export function describeConnectError(
  err: Error & { code?: string; level?: string },
  hop: Pick<Hop, 'address' | 'port' | 'user'>,
): { message: string; hint: string } {
  const where = `${hop.address}:${hop.port}`;
  if (err.code === 'ECONNREFUSED')
    return { message: `connection refused by ${where}`, hint: 'check that sshd runs there and ssh_port is right' };
  if (err.code === 'EHOSTUNREACH' || err.code === 'ENETUNREACH')
    return { message: `no route to ${where}`, hint: 'check the address and the provisioning network' };
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN')
    return { message: `cannot resolve ${hop.address}`, hint: 'check ssh_host / ansible_host' };
  if (err.code === 'ETIMEDOUT' || /timed out/i.test(err.message))
    return { message: `timed out connecting to ${where}`, hint: 'check that the host is up and reachable; raise the connect timeout if it is slow' };
  // Written to or read from a connection the host had already dropped, mid-handshake.
  if (err.code === 'EPIPE' || err.code === 'ECONNRESET')
    return { message: `${where} closed the connection during the SSH handshake (${err.message})`, hint: HANDSHAKE_DROPPED_HINT };
  if (err.level === 'client-authentication' || /authentication methods failed/i.test(err.message))
    return {
      message: `authentication as ${hop.user} to ${where} failed`,
      hint: 'check ssh_user and that the key (or agent / password) is authorized on the host',
    };
  return { message: `cannot connect to ${where}: ${err.message}`, hint: 'check the host and the network' };
}
