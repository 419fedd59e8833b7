// Virtual media: eject and insert through the standard actions, HPE's OEM actions, or a
// PATCH of the slot where a BMC has no actions (the DMTF reference tree).
import { TsbmError } from '../errors.js';
import { RedfishClient, type Resource } from './client.js';
import type { MediaSlot } from './discovery.js';
import { RedfishError } from './errors.js';
import type { Json } from './transport.js';

export function mediaImage(slot: { body: Json }): string | undefined {
  const img = slot.body.Image;
  return typeof img === 'string' && img !== '' ? img : undefined;
}

export function mediaInserted(slot: { body: Json }): boolean {
  return slot.body.Inserted === true || (slot.body.Inserted === undefined && mediaImage(slot) !== undefined);
}

/**
 * Ejects whatever is in the slot. Returns false when it was already empty, else the slot as the
 * BMC's answer shows it (a PATCH answered with the resource), or true when only a read can tell.
 */
export async function ejectMedia(client: RedfishClient, slot: MediaSlot): Promise<Resource | boolean> {
  if (!mediaInserted(slot) && mediaImage(slot) === undefined) return false;
  if (slot.eject) await client.post(slot.eject.target, {});
  else if (slot.oem.eject) await client.post(slot.oem.eject, {});
  else return RedfishClient.representation(await client.patch(slot.path, { Image: null, Inserted: false }, slot.etag), slot.path) ?? true;
  return true;
}

/** The InsertMedia body for this slot: protocol and method only when the BMC lists them. */
export function insertBody(slot: MediaSlot, image: string): Json {
  const body: Json = { Image: image, Inserted: true, WriteProtected: true };
  const allow = slot.insert?.allowable ?? {};
  const scheme = /^([a-z]+):/i.exec(image)?.[1]?.toUpperCase();
  const protos = allow.TransferProtocolType;
  if (protos && scheme) {
    if (!protos.includes(scheme)) {
      throw new TsbmError('runtime', `BMC ${slot.path} accepts virtual media over ${protos.join(', ')}, not ${scheme}`, {
        hint: 'serve the image over a protocol the BMC lists',
      });
    }
    body.TransferProtocolType = scheme;
  }
  if (allow.TransferMethod?.includes('Stream')) body.TransferMethod = 'Stream';
  return body;
}

/**
 * POSTs an insert action. When the connection drops after the request went out, the BMC may
 * or may not have acted (a POST is not retried blindly): the slot is read, and only an image
 * that is not there yet is inserted again, once.
 */
async function postInsert(client: RedfishClient, slot: MediaSlot, target: string, body: Json, image: string): Promise<void> {
  try {
    await client.post(target, body);
  } catch (e) {
    if (!(e instanceof RedfishError) || e.status !== undefined) throw e;
    const now = await client.get(slot.path);
    if (now.body.Image === image && now.body.Inserted !== false) {
      client.log(`InsertMedia's answer was lost (${e.message}), but ${slot.path} shows the image inserted`, 2);
      return;
    }
    client.log(`InsertMedia's answer was lost (${e.message}) and ${slot.path} does not show the image; inserting again`, 2);
    await client.post(target, body);
  }
}

/** Inserts the image; returns the slot when the BMC's answer shows it (a PATCH answered with the resource). */
export async function insertMedia(client: RedfishClient, slot: MediaSlot, image: string): Promise<Resource | undefined> {
  if (slot.insert) {
    const body = insertBody(slot, image);
    try {
      await postInsert(client, slot, slot.insert.target, body, image);
    } catch (e) {
      // Older firmware rejects the optional Inserted/WriteProtected parameters; retry without them.
      if (!(e instanceof RedfishError) || e.status !== 400) throw e;
      client.log(`InsertMedia with optional parameters refused (${e.message}); retrying with Image only`, 2);
      const { Inserted: _i, WriteProtected: _w, ...minimal } = body;
      await postInsert(client, slot, slot.insert.target, minimal, image);
    }
  } else if (slot.oem.insert) {
    await postInsert(client, slot, slot.oem.insert, { Image: image }, image);
  } else {
    // The slot's ETag as last seen (its read, or the eject's answer): no read just for the ETag.
    return RedfishClient.representation(await client.patch(slot.path, { Image: image, Inserted: true, WriteProtected: true }, slot.etag), slot.path);
  }
  return undefined;
}
