// The fake BMC's HTTP plumbing: one request as the handlers see it, and the answers they send.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BmcHttpError } from './messages.js';
import { type Json, taggedJson } from './state.js';

/** A request with its body read: what the fault layer and the Redfish handler take. */
export interface BmcRequest {
  readonly req: IncomingMessage;
  readonly method: string;
  /** The URL as sent; the fault layer may hand the handler a changed one (an ignored query). */
  readonly url: URL;
  /** Its body as text (JSON is parsed by the handler, so a fault can come before a 400). */
  readonly raw: string;
}

/** Answers one request (or throws a BmcHttpError that becomes the Redfish error answer). */
export type BmcHandler = (r: BmcRequest, res: ServerResponse) => Promise<void>;

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function notFound(path: string): BmcHttpError {
  return new BmcHttpError(404, 'ResourceMissingAtURI', `The resource at the URI ${path} was not found.`, 'Place a valid resource at the URI or correct the URI and resubmit the request.');
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'OData-Version': '4.0', ...headers });
  res.end(text);
}

export function sendResource(res: ServerResponse, r: Json): void {
  // One JSON.stringify for both the tag and the body (a mockup's System is tens of KiB).
  const { text, etag } = taggedJson(r);
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'OData-Version': '4.0', ETag: etag });
  res.end(text);
}
