// The fake BMC's Redfish service: the mockup tree served with state, logins, ETags, $expand,
// PATCH and actions (synchronous, or behind task monitors). Faults wrap it (fault-layer.ts).
import type { ServerResponse } from 'node:http';
import { prepareAction } from './actions.js';
import { expandResource } from './expand.js';
import type { BmcFaults } from './faults.js';
import { type BmcHandler, type BmcRequest, header, notFound, send, sendResource } from './http.js';
import { BmcHttpError } from './messages.js';
import { applyPatch, checkIfMatch } from './patch.js';
import type { BmcProfile } from './profile.js';
import type { BmcSessions } from './sessions.js';
import { type FakeBmcState, findAction, type Json, normPath, ROOT } from './state.js';
import type { TaskMonitors } from './tasks.js';

export interface RedfishService {
  tree: Map<string, Json>;
  state: FakeBmcState;
  sessions: BmcSessions;
  /** false: the SessionService refuses logins (405). */
  sessionsEnabled: boolean;
  /** PATCH without a matching If-Match is refused with 412. */
  requireEtag: boolean;
  /** Actions answer 202 with a task monitor. */
  asyncTasks: boolean;
  tasks: TaskMonitors;
  /** The firmware's quirks (boot override, InsertMedia, shutdown): how PATCH and actions behave. */
  quirks: BmcFaults;
  /** The Redfish service whose behaviour this BMC copies beyond the tree (profile.ts). */
  profile?: BmcProfile | undefined;
}

export function redfishHandler(s: RedfishService): BmcHandler {
  const emptyImage = [...s.tree.values()].some((b) => b.Image === '') ? '' : null;
  return async (r: BmcRequest, res: ServerResponse) => {
    const { method, url } = r;
    const path = normPath(url.pathname);
    const body = parseBody(r.raw);
    if (path === '/redfish' && method === 'GET') return send(res, 200, { v1: '/redfish/v1/' });
    if (path === ROOT && method === 'GET') return sendResource(res, s.tree.get(ROOT) ?? {});
    if (path === s.sessions.path && method === 'POST') {
      if (!s.sessionsEnabled) throw new BmcHttpError(405, 'OperationNotAllowed', 'Sessions are disabled on this service.');
      return s.sessions.create(res, body);
    }
    s.sessions.authenticate(r.req);
    if (method === 'GET') {
      if (s.tasks.poll(res, path)) return;
      const resource = s.tree.get(path);
      if (!resource) throw notFound(path);
      const expand = url.searchParams.get('$expand'); // decoded: `%24expand=.%28...` works too
      return sendResource(res, expand === null ? resource : expandResource(s.tree, resource, expand));
    }
    if (method === 'DELETE') {
      if (!s.sessions.delete(path)) throw notFound(path);
      res.writeHead(204).end();
      return;
    }
    if (method === 'PATCH') {
      const resource = s.tree.get(path);
      if (!resource) throw notFound(path);
      checkIfMatch(resource, header(r.req, 'if-match'), s.requireEtag);
      const own = s.profile?.patch?.(resource, body);
      if (own) {
        res.writeHead(own.status, { 'Content-Type': own.contentType, 'OData-Version': '4.0' }).end(own.body);
        return;
      }
      applyPatch(resource, body, { ignoreBootOverride: s.quirks.ignoreBootOverride, onceReadsContinuous: s.quirks.onceReadsContinuous, emptyImage });
      if ('Image' in body || 'Inserted' in body) s.state.mediaChanged(path);
      return sendResource(res, resource);
    }
    if (method === 'POST') {
      const ref = findAction(s.tree, path);
      if (!ref) throw notFound(path);
      const effect = prepareAction(s.state, ref, body, emptyImage, s.quirks);
      // A machine behind the BMC changes its CD drive when the slot does (insert/eject actions).
      const apply = () => {
        effect();
        if (/Media$/.test(ref.name)) s.state.mediaChanged(ref.resource);
      };
      if (s.asyncTasks) return s.tasks.start(res, apply);
      apply();
      res.writeHead(204).end();
      return;
    }
    throw new BmcHttpError(405, 'OperationNotAllowed', `The HTTP method ${method} is not allowed on ${path}.`);
  };
}

function parseBody(raw: string): Json {
  if (raw.length === 0) return {};
  try {
    return JSON.parse(raw) as Json;
  } catch {
    throw new BmcHttpError(400, 'MalformedJSON', 'The request body submitted was malformed JSON and could not be parsed by the receiving service.');
  }
}
