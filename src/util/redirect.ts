// Where a controller-side download may be redirected: to http(s) only, and never from https
// down to plain http (that would hand the rest of the transfer, and anything in the URL, to
// whoever sits on the path, and undo the TLS the operator asked for).
export class RedirectRefused extends Error {}

/** The absolute URL a redirect leads to, or RedirectRefused. */
export function followRedirect(from: string, location: string): string {
  let to: URL;
  try {
    to = new URL(location, from);
  } catch {
    throw new RedirectRefused(`redirected to ${JSON.stringify(location)}, which is not a URL`);
  }
  if (to.protocol !== 'https:' && to.protocol !== 'http:') throw new RedirectRefused(`redirected to a ${to.protocol} URL; only http(s) is followed`);
  if (new URL(from).protocol === 'https:' && to.protocol === 'http:') {
    throw new RedirectRefused(`redirected from https to plain http (${to.origin}); refused, a download that started on TLS stays on TLS`);
  }
  return to.href;
}
