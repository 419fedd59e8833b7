// RedfishError: a failed Redfish request with what the BMC said (`@Message.ExtendedInfo`),
// the HTTP status, method, URL and BMC host. Built from the request only, never from headers,
// so credentials and session tokens cannot leak into it.
import { TsbmError } from '../errors.js';

export interface RedfishMessage {
  id?: string;
  message: string;
  resolution?: string;
}

/**
 * Pulls the human text out of a Redfish error body (`error.@Message.ExtendedInfo[]`, or
 * `error.message`). Entries that carry only a MessageId (sushy-tools' GeneralError) give way to
 * `error.message` when there is one: the id alone says nothing.
 */
export function extendedInfo(body: unknown): RedfishMessage[] {
  if (!body || typeof body !== 'object') return [];
  const err = (body as Record<string, unknown>).error as Record<string, unknown> | undefined;
  const info = (err?.['@Message.ExtendedInfo'] ?? (body as Record<string, unknown>)['@Message.ExtendedInfo']) as unknown;
  const out: RedfishMessage[] = [];
  let idOnly: string | undefined;
  if (Array.isArray(info)) {
    for (const m of info) {
      if (!m || typeof m !== 'object') continue;
      const r = m as Record<string, unknown>;
      const id = typeof r.MessageId === 'string' ? r.MessageId : undefined;
      if (typeof r.Message !== 'string' || r.Message === '') {
        idOnly ??= id;
        continue;
      }
      out.push({
        message: r.Message,
        ...(id ? { id } : {}),
        ...(typeof r.Resolution === 'string' && r.Resolution ? { resolution: r.Resolution } : {}),
      });
    }
  }
  if (out.length === 0 && typeof err?.message === 'string' && err.message) out.push({ message: err.message, ...(idOnly ? { id: idOnly } : {}) });
  else if (out.length === 0 && idOnly) out.push({ message: idOnly, id: idOnly });
  return out;
}

/** Longest text of a non-Redfish error body shown in a message. */
const MAX_BODY_TEXT = 300;

/**
 * What the BMC said in an error answer, whatever its content type: the Redfish messages of a
 * JSON body, else the body's own text (plain text labelled JSON, HTML), tags stripped, on one
 * line and cut short.
 */
export function errorMessages(res: { body: unknown; text?: string | undefined }): RedfishMessage[] {
  const structured = extendedInfo(res.body);
  if (structured.length > 0 || res.text === undefined) return structured;
  const text = res.text
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!text) return [];
  return [{ message: text.length > MAX_BODY_TEXT ? `${text.slice(0, MAX_BODY_TEXT)}…` : text }];
}

export class RedfishError extends TsbmError {
  readonly status: number | undefined;
  readonly method: string;
  readonly url: string;
  readonly bmc: string;
  readonly messages: RedfishMessage[];

  constructor(
    what: string,
    opts: { status?: number; method: string; url: string; bmc: string; messages?: RedfishMessage[]; hint?: string; host?: string; cause?: unknown },
  ) {
    const msgs = opts.messages ?? [];
    const detail = msgs.length ? `: ${msgs.map((m) => m.message).join('; ')}` : '';
    const status = opts.status !== undefined ? ` (HTTP ${opts.status})` : '';
    // The BMC's own Resolution text is the hint unless the caller knows better.
    const hint = opts.hint ?? msgs.find((m) => m.resolution)?.resolution;
    super('runtime', `Redfish ${opts.method} ${opts.url} on BMC ${opts.bmc} ${what}${status}${detail}`, {
      ...(hint ? { hint } : {}),
      ...(opts.host ? { host: opts.host } : {}),
      ...(opts.cause !== undefined ? { cause: opts.cause } : {}),
    });
    this.name = 'RedfishError';
    this.status = opts.status;
    this.method = opts.method;
    this.url = opts.url;
    this.bmc = opts.bmc;
    this.messages = msgs;
  }

  /** True when any ExtendedInfo message id or text matches. */
  mentions(re: RegExp): boolean {
    return this.messages.some((m) => re.test(m.message) || (m.id !== undefined && re.test(m.id)));
  }
}
