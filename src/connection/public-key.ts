// The public half of the controller's SSH key, as one authorized_keys line: from KEY.pub beside
// the private key when it is there, else computed from the private key itself.
import { existsSync, readFileSync } from 'node:fs';
import { utils } from './ssh2-lib.js';

export function publicKeyLine(privateKeyFile: string, passphrase?: string): string {
  const pub = `${privateKeyFile}.pub`;
  if (existsSync(pub)) {
    const line = readFileSync(pub, 'utf8').split('\n').find((l) => l.trim() && !l.startsWith('#'));
    if (line) return line.trim();
  }
  const parsed = utils.parseKey(readFileSync(privateKeyFile), passphrase);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key instanceof Error) throw new Error(`cannot read the SSH key ${privateKeyFile}: ${key instanceof Error ? key.message : 'no key in it'}`);
  return `${key.type} ${key.getPublicSSH().toString('base64')}`;
}
