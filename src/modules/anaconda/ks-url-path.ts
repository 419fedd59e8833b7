// Which path of tsbm's HTTP server an operator's ks_url may take: one of its own. The server
// matches it exactly (a prefix such as /files used to cover every published file); paths under
// the server's own prefixes (published files, installer callbacks) and the root are refused, by
// the preflight and again by kickstart_media, before anything is served.
import { FILES_PREFIX } from '../../http/file-server.js';
import { INSTALL_PREFIX } from '../../http/install-callbacks.js';

/** The decoded path the server will match, or why `u` cannot be a kickstart's URL. */
export function ksUrlPath(u: URL): { path: string } | { problem: string } {
  let path: string;
  try {
    path = decodeURIComponent(u.pathname);
  } catch {
    return { problem: `its path ${u.pathname} is not valid percent-encoding` };
  }
  if (u.search || u.hash) return { problem: 'it has a query or fragment (the server matches the path only)' };
  if (path === '/' || path.endsWith('/')) return { problem: `its path ${path} names no file` };
  for (const prefix of [FILES_PREFIX, INSTALL_PREFIX]) {
    if (path.startsWith(prefix) || path === prefix.slice(0, -1)) return { problem: `its path ${path} is tsbm's own (${prefix}...: published files and installer callbacks)` };
  }
  return { path };
}
