// PATCH with optimistic concurrency: If-Match with the resource's ETag (header or
// `@odata.etag`); on 412 re-read and try once more, then once without If-Match (sushy's way:
// some BMCs publish ETags they do not accept back).
import type { RedfishResponse } from './transport.js';

export interface EtagIo {
  /** GET returning the ETag the resource currently has, if any. */
  etagOf(path: string): Promise<string | undefined>;
  patch(path: string, body: unknown, headers: Record<string, string>): Promise<RedfishResponse>;
  log(message: string): void;
}

export function etagFrom(headers: Record<string, unknown>, body: Record<string, unknown> | undefined): string | undefined {
  const h = headers.etag;
  if (typeof h === 'string' && h) return h;
  const b = body?.['@odata.etag'];
  return typeof b === 'string' && b ? b : undefined;
}

export async function patchWithEtag(io: EtagIo, path: string, body: unknown, knownEtag?: string): Promise<RedfishResponse> {
  const etag = knownEtag ?? (await io.etagOf(path));
  if (etag === undefined) return io.patch(path, body, {});
  let res = await io.patch(path, body, { 'If-Match': etag });
  if (res.status !== 412) return res;
  io.log(`PATCH ${path}: ETag ${etag} was stale (412); re-reading`);
  const fresh = await io.etagOf(path);
  if (fresh !== undefined) {
    res = await io.patch(path, body, { 'If-Match': fresh });
    if (res.status !== 412) return res;
  }
  io.log(`PATCH ${path}: ETag refused again (412); retrying without If-Match`);
  return io.patch(path, body, {});
}
