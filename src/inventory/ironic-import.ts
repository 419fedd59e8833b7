// `tsbm inventory import --from-ironic`: Ironic nodes (the JSON of `baremetal node list --long
// -f json`, of `baremetal node show -f json` one or many, or of the API's GET /v1/nodes/detail)
// to a tsbm YAML inventory. driver_info, instance_info and properties are carried over as
// Ironic has them; every secret (a secret-looking name, or a value Ironic masked as "******")
// becomes an `{{ env "NAME" }}` reference and is listed, and no secret value is ever written.
// Ironic's data is data: every imported string that could read as a template is written with
// YAML's `!unsafe` tag (Ansible's), which tsbm's loader (and Ansible's) hands out as the string
// it is and never renders; nothing a value holds can undo that. Names and keys are never
// rendered by either engine; a host name that holds `{{` reaches templates as data too
// (inventory/vars.ts). Node names with control characters, nesting deeper than MAX_DEPTH and
// inputs over MAX_INPUT_BYTES are refused in one line.
import { stringify } from 'yaml';
import { parseError } from '../errors.js';
import { isSecretName } from '../output/redact.js';
import { YAML_TAGS } from '../schema/yaml-tags.js';
import { UnsafeText } from '../util/unsafe-text.js';
import { setOwn } from '../util/own-property.js';
import { hostNameProblem } from './host-name.js';

/** What Ironic's API and client print instead of a secret. */
const IRONIC_MASK = '******';

/** Environment variable names for the usual secrets, as in inventory-examples/lab.yml. */
const ENV_NAMES: Record<string, string> = {
  'driver_info.redfish_password': 'BMC_PASSWORD',
  'driver_info.ipmi_password': 'BMC_PASSWORD',
  'instance_info.image_pull_secret': 'PULL_SECRET',
};

/** `--long` column labels (python-ironicclient) whose field name is not the label in snake case. */
const LABEL_FIELDS: Record<string, string> = {
  'Provisioning State': 'provision_state',
  'Current RAID configuration': 'raid_config',
  'Target RAID configuration': 'target_raid_config',
  'Network Configuration': 'network_data',
  'Child Nodes': 'children',
};

const CARRIED = ['driver_info', 'instance_info', 'properties'] as const;

/** Deeper than any real node's fields; deeper input is refused, not recursed into. */
const MAX_DEPTH = 32;
/** The largest input read (a JSON text of about 100 000 real nodes). */
const MAX_INPUT_BYTES = 256 * 1024 * 1024;

export interface ImportOptions {
  /** The group every node goes in. */
  group: string;
  /** One environment variable per node and secret (NAME_NODE) instead of one per secret. */
  perNodeSecrets: boolean;
  /** Where the input came from, for messages. */
  source: string;
}

interface ImportedSecret {
  env: string;
  field: string;
  hosts: string[];
  /** True when the input held the value itself (not Ironic's mask): it was left out all the same. */
  valueInInput: boolean;
}

export interface ImportResult {
  yaml: string;
  hosts: string[];
  secrets: ImportedSecret[];
  /** Things the operator still has to do, one line each. */
  notes: string[];
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

const own = <T>(table: Record<string, T>, key: string): T | undefined => (Object.hasOwn(table, key) ? table[key] : undefined);

/** A stream of JSON documents (one, or several printed one after another). */
function parseDocuments(text: string, source: string): unknown[] {
  // One document (a list, or the API's {"nodes": [...]}) is the usual case: parsed at once.
  try {
    return [JSON.parse(text)];
  } catch {
    // several documents one after another (node show per node), or an error to place
  }
  const docs: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const end = endOfValue(text, i);
    try {
      docs.push(JSON.parse(text.slice(i, end)));
    } catch (e) {
      const line = text.slice(0, i).split('\n').length;
      throw parseError(`${source}: not Ironic JSON (document at line ${line}: ${(e as Error).message})`, undefined, HINT);
    }
    i = end;
  }
  return docs;
}

/** Where the JSON value starting at `i` ends: the matching bracket, or the next whitespace. */
function endOfValue(text: string, i: number): number {
  const open = text[i];
  if (open !== '{' && open !== '[') {
    const m = /\s/.exec(text.slice(i));
    return m ? i + m.index : text.length;
  }
  let depth = 0;
  let inString = false;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (inString) {
      if (c === '\\') j++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return text.length;
}

const HINT =
  'give the output of `baremetal node list --long -f json`, or of `baremetal node show -f json` (one node, or several one after another)';

/** A node's fields by their API names, whatever form the input used. */
function fieldsOf(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    const field = own(LABEL_FIELDS, k) ?? (/[A-Z ]/.test(k) ? k.toLowerCase().replace(/ /g, '_') : k);
    setOwn(out, field, v);
  }
  return out;
}

function nodesOf(docs: unknown[], source: string): Record<string, unknown>[] {
  const nodes: Record<string, unknown>[] = [];
  const add = (list: unknown[]) => {
    for (const n of list) nodes.push(isMap(n) ? fieldsOf(n) : {});
  };
  for (const d of docs) {
    if (Array.isArray(d)) add(d);
    else if (isMap(d) && Array.isArray(d.nodes)) add(d.nodes);
    else if (isMap(d)) nodes.push(fieldsOf(d));
    else throw parseError(`${source}: expected Ironic nodes (a JSON object or a list of them), found ${typeof d}`, undefined, HINT);
  }
  if (nodes.length === 0) throw parseError(`${source}: no nodes in it`, undefined, HINT);
  return nodes;
}

function mapField(node: Record<string, unknown>, field: string, host: string, source: string): Record<string, unknown> {
  const v = node[field];
  if (v === undefined || v === null || v === '') return {};
  if (isMap(v)) return v;
  if (typeof v === 'string') {
    try {
      const parsed: unknown = JSON.parse(v);
      if (isMap(parsed)) return parsed;
    } catch {
      // falls through to the error: the client printed it as text
    }
  }
  throw parseError(
    `${source}: node ${host}: ${field} is ${typeof v === 'string' ? `text ("${v.slice(0, 40)}…"), not a JSON object` : `a ${typeof v}`}`,
    undefined,
    'your client formatted it; use `baremetal node show NODE -f json` per node, which prints it as JSON',
  );
}

function envName(field: string, host: string, perNode: boolean): string {
  const base = own(ENV_NAMES, field) ?? field.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();
  return perNode ? `${base}_${host.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase()}` : base;
}

/** A string any template engine could read as a template (Handlebars' `{{`, Jinja's `{%` `{#`) becomes `!unsafe` data. */
function asData(v: string): string | UnsafeText {
  return v.includes('{') ? new UnsafeText(v) : v;
}

export function importIronicNodes(text: string, opts: ImportOptions): ImportResult {
  if (text.length > MAX_INPUT_BYTES)
    throw parseError(`${opts.source}: the input is larger than ${MAX_INPUT_BYTES / 1024 / 1024} MiB`, undefined, 'import the nodes in parts (baremetal node list --limit/--marker), each into its own inventory file');
  const nodes = nodesOf(parseDocuments(text, opts.source), opts.source);
  const secrets = new Map<string, ImportedSecret>();
  const notes: string[] = [];
  const hosts = new Map<string, Record<string, unknown>>();
  /** Nodes a deploy must not take by surprise: an instance on them, or Ironic has them in maintenance. */
  const active: string[] = [];
  const maintenance: string[] = [];
  const protectedNodes: string[] = [];
  let tagged = 0;

  /** Copies a field's tree, putting env references where secrets were and `!unsafe` on strings. */
  const carry = (v: unknown, path: string, host: string, depth: number): unknown => {
    if (depth > MAX_DEPTH && v !== null && typeof v === 'object')
      throw parseError(`${opts.source}: node ${host}: ${path.split('.')[0]} nests deeper than ${MAX_DEPTH} levels`, undefined, 'no Ironic field is that deep: check the input is what `baremetal node show -f json` printed');
    if (isMap(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const p = `${path}.${k}`;
        const masked = x === IRONIC_MASK;
        const secret = masked || (isSecretName(k) && x !== null && x !== undefined && x !== '' && typeof x !== 'boolean');
        if (!secret) {
          setOwn(out, k, carry(x, p, host, depth + 1));
          continue;
        }
        const env = envName(p, host, opts.perNodeSecrets);
        const s = secrets.get(`${env}\0${p}`) ?? { env, field: p, hosts: [], valueInInput: false };
        s.hosts.push(host);
        if (!masked) s.valueInInput = true;
        secrets.set(`${env}\0${p}`, s);
        setOwn(out, k, `{{ env "${env}" }}`);
      }
      return out;
    }
    if (Array.isArray(v)) return v.map((x, i) => carry(x, `${path}.${i}`, host, depth + 1));
    if (typeof v !== 'string') return v;
    const d = asData(v);
    if (d !== v) tagged++;
    return d;
  };

  for (const node of nodes) {
    const uuid = typeof node.uuid === 'string' ? node.uuid : undefined;
    const name = typeof node.name === 'string' && node.name ? node.name : uuid;
    if (!name) throw parseError(`${opts.source}: a node without a name or UUID`, undefined, HINT);
    const bad = hostNameProblem(name);
    if (bad) throw parseError(`${opts.source}: node ${JSON.stringify(name)}: ${bad}`, undefined, 'rename the node in Ironic (baremetal node set --name), or remove it from the input');
    if (hosts.has(name)) throw parseError(`${opts.source}: node ${name} appears twice`, undefined, 'give each node once');
    const vars: Record<string, unknown> = {};
    if (uuid) vars.ironic_uuid = asData(uuid);
    for (const f of CARRIED) {
      const m = mapField(node, f, name, opts.source);
      if (Object.keys(m).length) vars[f] = carry(m, f, name, 1);
    }
    const di = (vars.driver_info ?? {}) as Record<string, unknown>;
    if (!di.redfish_address) {
      const driver = typeof node.driver === 'string' ? ` (driver ${node.driver})` : '';
      notes.push(`${name}${driver} has no driver_info.redfish_address: tsbm drives BMCs over Redfish; add it`);
    }
    // The ramdisk ISO a Redfish virtual-media boot uses, when Ironic has it as a URL.
    const iso = [di.redfish_deploy_iso, di.deploy_iso].find((x) => typeof x === 'string' && /^(https?:\/\/|\/)/.test(x));
    if (iso) vars.ramdisk_iso = iso;
    // Ironic's state and protection, under Ironic's names: the deploy gate reads them for a node
    // tsbm has no record of yet (an instance on it is refused without --rebuild; protected by all).
    if (typeof node.provision_state === 'string' && node.provision_state) vars.provision_state = asData(node.provision_state);
    if (node.protected === true || node.protected === 'True' || node.protected === 'true') {
      vars.protected = true;
      protectedNodes.push(name);
      if (typeof node.protected_reason === 'string' && node.protected_reason) vars.protected_reason = asData(node.protected_reason);
    }
    hosts.set(name, vars);
    if (node.provision_state === 'active') active.push(name);
    if (node.maintenance === true || node.maintenance === 'True' || node.maintenance === 'true') maintenance.push(name);
  }

  const names = [...hosts.keys()];
  const noIso = names.filter((h) => hosts.get(h)!.ramdisk_iso === undefined);
  if (noIso.length)
    notes.push(`ramdisk_iso is not known for ${listOf(noIso)}: set it (a URL the BMC can fetch, or a local ISO path) in the inventory or group_vars/${opts.group}.yml`);
  const noImage = names.filter((h) => !(hosts.get(h)!.instance_info as Record<string, unknown> | undefined)?.image_source);
  if (noImage.length) notes.push(`instance_info.image_source is not set for ${listOf(noImage)}: set it (oci://registry/path:tag) before a deploy`);
  if (active.length || maintenance.length) {
    const which = [active.length ? `${listOf(active)} ${active.length === 1 ? 'has' : 'have'} an instance in Ironic (group ironic_active)` : '', maintenance.length ? `${listOf(maintenance)} ${maintenance.length === 1 ? 'is' : 'are'} in maintenance (group ironic_maintenance)` : ''].filter(Boolean);
    notes.push(`${which.join('; ')}: a deploy wipes what is on a disk; leave them out with --limit '${opts.group}:!ironic_active:!ironic_maintenance' until you mean to`);
  }
  if (active.length || protectedNodes.length) {
    const said = [
      active.length ? `a deploy refuses ${listOf(active)} (provision_state: active, as in Ironic) unless --rebuild` : '',
      protectedNodes.length ? `every playbook refuses ${listOf(protectedNodes)} (protected: true, as in Ironic)` : '',
    ].filter(Boolean);
    notes.push(`Ironic's provision_state and protected are carried over: ${said.join('; ')}`);
  }
  notes.push('ssh_host (the address the ramdisk gets), ssh_user and ssh_private_key_file say how tsbm reaches each ramdisk: Ironic does not know them; set them');
  if (tagged) notes.push(`${tagged} value(s) hold "{": written with YAML's !unsafe tag, so neither tsbm nor Ansible ever renders them as templates`);

  const secretList = [...secrets.values()].sort((a, b) => a.env.localeCompare(b.env) || a.field.localeCompare(b.field));
  const header = [
    `Imported from Ironic (${opts.source}) by \`tsbm inventory import --from-ironic\`.`,
    'driver_info, instance_info and properties are as Ironic has them; secrets are read from the',
    "controller's environment when a task needs them (Ironic never shows them):",
    ...(secretList.length ? secretList.map((s) => `  ${s.env}: ${s.field} (${listOf(s.hosts)})`) : ['  (none)']),
    ...(notes.length ? ['Still to do:', ...notes.map((n) => `  - ${n}`)] : []),
  ];
  const children: Record<string, unknown> = { [opts.group]: { hosts } };
  const names0 = (list: string[]) => ({ hosts: new Map(list.map((h) => [h, null])) });
  if (active.length) children.ironic_active = names0(active);
  if (maintenance.length) children.ironic_maintenance = names0(maintenance);
  const doc = { all: { children } };
  const yaml = `${header.map((l) => `# ${l}`.trimEnd()).join('\n')}\n${stringify(doc, { lineWidth: 0, customTags: YAML_TAGS })}`;
  return { yaml, hosts: names, secrets: secretList, notes };
}

function listOf(names: string[]): string {
  return names.length <= 5 ? names.join(', ') : `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
}
