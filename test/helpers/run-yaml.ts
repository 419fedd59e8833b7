// Runs a playbook written inline against an inline inventory, through the real loader,
// inventory and connections; returns the exit code and the events, for tests of one behaviour.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runPlaybook } from '../../src/executor/run.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import type { SshHost } from './ssh-host.js';
import { baseOptions } from './executor-model.js';

export type HostResult = Extract<TsbmEvent, { type: 'host_result' }>;

/** Inventory vars that reach an in-process SSH host. */
export function sshVars(h: SshHost, indent = '      '): string {
  const s = h.spec;
  return [
    `ssh_host: 127.0.0.1`,
    `ssh_port: ${s.port}`,
    `ssh_user: ${s.user}`,
    `ssh_private_key_file: ${s.privateKeyFile}`,
    `ssh_known_hosts_file: ${s.knownHostsFile}`,
  ]
    .map((l) => `${indent}${l}\n`)
    .join('');
}

/** An inventory with one host, `name`, reached at the in-process SSH host `h`. */
export function oneHostInventory(h: SshHost, name = 'node1'): string {
  return `all:\n  hosts:\n    ${name}:\n${sshVars(h)}`;
}

export async function runYaml(
  inventory: string,
  playbook: string,
): Promise<{ code: number; events: TsbmEvent[]; result(host: string, task: string): HostResult | undefined; warnings: string[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-run-yaml-'));
  try {
    writeFileSync(path.join(dir, 'inventory.yml'), inventory);
    writeFileSync(path.join(dir, 'site.yml'), playbook);
    const bus = new EventBus();
    const events: TsbmEvent[] = [];
    bus.on((e) => events.push(e));
    const code = await runPlaybook(baseOptions({ playbook: path.join(dir, 'site.yml'), inventories: [path.join(dir, 'inventory.yml')] }), {
      bus,
      redactor: new Redactor(),
    });
    return {
      code,
      events,
      result: (host, task) =>
        events.find((e): e is HostResult => e.type === 'host_result' && e.host === host && e.task === task && e.item === undefined),
      warnings: events.flatMap((e) => (e.type === 'warning' ? [e.message] : [])),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
