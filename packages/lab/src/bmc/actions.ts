// POST actions of the fake BMC: ComputerSystem.Reset (with iDRAC's 409 on a redundant
// power change), standard and HPE OEM virtual media insert/eject. Unknown actions succeed idly.
import type { BmcFaults } from './faults.js';
import { BmcHttpError } from './messages.js';
import { type ActionRef, type FakeBmcState, type Json, normPath } from './state.js';

const STANDARD_RESETS = ['On', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'Nmi', 'ForceOn', 'PushPowerButton', 'PowerCycle'];

/** Values the action accepts: inline list and ActionInfo, with concatenated firmware typos split. */
function allowedValues(state: FakeBmcState, def: Json, param: string): string[] | undefined {
  const out: string[] = [];
  const inline = def[`${param}@Redfish.AllowableValues`];
  if (Array.isArray(inline)) out.push(...inline.map(String));
  const infoPath = def['@Redfish.ActionInfo'];
  const info = typeof infoPath === 'string' ? state.get(infoPath) : undefined;
  const params = Array.isArray(info?.Parameters) ? (info.Parameters as Json[]) : [];
  for (const p of params) if (p.Name === param && Array.isArray(p.AllowableValues)) out.push(...p.AllowableValues.map(String));
  if (out.length === 0) return undefined;
  // Real firmware accepts the real names even when its list glues two together.
  return out.flatMap((v) => (param === 'ResetType' ? STANDARD_RESETS.filter((s) => v.includes(s)) : [v]));
}

function missing(param: string, action: string): BmcHttpError {
  return new BmcHttpError(400, 'ActionParameterMissing', `The action ${action} requires the parameter ${param} to be present in the request body.`, `Supply the action with the ${param} parameter and resubmit the request.`);
}

function notSupported(value: unknown, param: string, action: string): BmcHttpError {
  return new BmcHttpError(400, 'ActionParameterNotSupported', `The parameter ${param} with the value ${JSON.stringify(value)} for the action ${action} is not supported.`, 'Remove the parameter supplied and resubmit the request if the operation failed.');
}

/** Runs the action; returns a function applying its effect (so a task monitor can defer it). */
export function prepareAction(state: FakeBmcState, ref: ActionRef, body: Json, emptyImage: '' | null, faults: BmcFaults = {}): () => void {
  const action = ref.name.slice(1);
  const resource = state.get(ref.resource);
  if (!resource) throw new BmcHttpError(404, 'ResourceMissingAtURI', `The resource at the URI ${ref.resource} was not found.`);
  if (ref.name === '#ComputerSystem.Reset') return prepareReset(state, ref, body, action, faults);
  if (/InsertMedia$|InsertVirtualMedia$/.test(ref.name)) {
    if (typeof body.Image !== 'string' || body.Image === '') throw missing('Image', action);
    if (faults.strictInsertMedia) {
      const extra = ['Inserted', 'WriteProtected'].find((k) => k in body);
      if (extra) throw new BmcHttpError(400, 'ActionParameterUnknown', `The action ${action} was submitted with the invalid parameter ${extra}.`, 'Correct the invalid parameter and resubmit the request if the operation failed.');
    }
    const allowedProto = allowedValues(state, ref.def, 'TransferProtocolType');
    if (body.TransferProtocolType !== undefined && allowedProto && !allowedProto.includes(String(body.TransferProtocolType))) {
      throw notSupported(body.TransferProtocolType, 'TransferProtocolType', action);
    }
    if (resource.Inserted === true) {
      throw new BmcHttpError(409, 'ResourceInUse', `The virtual media at ${ref.resource} already has an image inserted.`, 'Eject the media and resubmit the request.');
    }
    const image = body.Image;
    return () => {
      resource.Image = image;
      resource.ImageName = image.split('/').pop() ?? null;
      resource.Inserted = body.Inserted ?? true;
      resource.WriteProtected = body.WriteProtected ?? true;
      resource.ConnectedVia = 'URI';
      if (body.TransferProtocolType !== undefined) resource.TransferProtocolType = body.TransferProtocolType;
    };
  }
  if (/EjectMedia$|EjectVirtualMedia$/.test(ref.name)) {
    return () => {
      resource.Image = emptyImage;
      resource.ImageName = null;
      resource.Inserted = false;
      resource.ConnectedVia = 'NotConnected';
    };
  }
  return () => {};
}

function prepareReset(state: FakeBmcState, ref: ActionRef, body: Json, action: string, faults: BmcFaults): () => void {
  const system = normPath(ref.resource);
  if (!state.systemPaths.includes(system)) return () => {}; // manager/chassis resets: nothing to simulate
  const type = body.ResetType;
  if (typeof type !== 'string') throw missing('ResetType', action);
  const allowed = allowedValues(state, ref.def, 'ResetType') ?? STANDARD_RESETS;
  if (!allowed.includes(type)) throw notSupported(type, 'ResetType', action);
  const power = state.powerStateOf(system);
  const on = power === 'On' || power === 'PoweringOn';
  if ((type === 'On' || type === 'ForceOn') && on) {
    throw new BmcHttpError(409, 'ResourceInStandby', 'Unable to perform the operation because the server is already powered ON.', 'Do not turn the server on when it is already on.');
  }
  if ((type === 'ForceOff' || type === 'GracefulShutdown') && !on) {
    throw new BmcHttpError(409, 'ResourceInStandby', 'Unable to perform the operation because the server is already powered OFF.', 'Do not turn the server off when it is already off.');
  }
  return () => {
    state.resets.push(type);
    switch (type) {
      case 'On':
      case 'ForceOn':
        return state.transition('On', undefined, system);
      case 'GracefulShutdown':
        if (faults.ignoreGracefulShutdown) return; // the OS ignores the ACPI request
        return state.transition('Off', undefined, system);
      case 'ForceOff':
        return state.transition('Off', undefined, system);
      case 'PushPowerButton':
        return state.transition(on ? 'Off' : 'On', undefined, system);
      case 'ForceRestart':
      case 'GracefulRestart':
      case 'PowerCycle':
        return on ? state.transition('Off', 'On', system) : state.transition('On', undefined, system);
      default:
        return; // Nmi: the OS would notice, the power state does not change
    }
  };
}
