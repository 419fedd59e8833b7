// A run journal of a deploy-bootc.yml run on N nodes, shaped as the simulated lab's runs write
// them (same tasks, messages and results, per-node UUIDs, MACs and digests), with a few nodes
// failing, unreachable or retrying BMC requests. For report tests at fleet size without
// running a fleet.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { JournalRecord } from '../../src/journal/records.js';

const TASKS: Array<{ id: string; name: string; module: string; ms: number }> = [
  { id: 'roles/power-off/tasks/main.yml:2:3', name: 'Power the node off', module: 'redfish_power', ms: 300 },
  { id: 'roles/boot-ramdisk/tasks/main.yml:4:3', name: 'Insert the ramdisk ISO and boot once from it', module: 'vmedia_boot', ms: 450 },
  { id: 'roles/boot-ramdisk/tasks/main.yml:11:3', name: 'Power the node on', module: 'redfish_power', ms: 2000 },
  { id: 'roles/wait-agent/tasks/main.yml:4:3', name: 'Wait for the ramdisk and check it is this node', module: 'wait_agent', ms: 1700 },
  { id: 'roles/discover/tasks/main.yml:2:3', name: 'Choose the root disk', module: 'root_device', ms: 120 },
  { id: 'roles/deploy/tasks/main.yml:2:3', name: 'Pull the image', module: 'podman_pull', ms: 900 },
  { id: 'roles/deploy/tasks/main.yml:14:3', name: 'Install the image to the root disk', module: 'bootc_install', ms: 2100 },
  { id: 'roles/configure/tasks/main.yml:2:3', name: 'Write the config drive', module: 'configdrive_write', ms: 3300 },
  { id: 'roles/finish/tasks/main.yml:2:3', name: 'Flush the disk', module: 'command', ms: 60 },
  { id: 'roles/finish/tasks/main.yml:6:3', name: 'Eject the ramdisk ISO', module: 'vmedia_boot', ms: 30 },
  { id: 'roles/finish/tasks/main.yml:10:3', name: 'Boot from disk from now on', module: 'redfish_boot_device', ms: 40 },
  { id: 'roles/finish/tasks/main.yml:15:3', name: 'Power cycle into the installed system', module: 'redfish_power', ms: 2000 },
  { id: 'roles/finish/tasks/main.yml:22:3', name: 'Wait for the installed system to answer SSH', module: 'wait_for_connection', ms: 5 },
];

const hex = (s: string, n: number) => createHash('sha256').update(s).digest('hex').slice(0, n);
const uuidOf = (s: string) => {
  const h = hex(s, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

function resultFor(task: number, host: string, i: number): { msg: string; result: Record<string, unknown>; status: 'ok' | 'changed' | 'skipped' } {
  const uuid = uuidOf(host);
  const macs = [0x10, 0x11].map((x) => `52:54:00:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}:${x.toString(16)}`);
  const image = 'registry.sim.tsbm:5000/tsbm/bootc-demo:latest';
  const disk = {
    name: '/dev/vda', kname: 'vda', type: 'disk', sizeBytes: 21474836480, rotational: false, readOnly: false, removable: false,
    model: 'SIM VIRTUAL DISK', vendor: 'TSBM', serial: `SIM-${host}`, hctl: '0:0:0:0', tran: 'sata',
    summary: `/dev/vda size=20GiB (21474836480 bytes) type=disk rotational=false model=SIM VIRTUAL DISK vendor=TSBM serial=SIM-${host} hctl=0:0:0:0 tran=sata`,
  };
  switch (task) {
    case 0:
      return { status: 'ok', msg: 'already Off', result: { changed: false, msg: 'already Off', power_state: 'Off', system_uuid: uuid, mac_addresses: macs, failed: false } };
    case 1: {
      const msg = 'inserted http://127.0.0.1:9/tsbm-sim-ramdisk.iso; next boot from Cd';
      return { status: 'changed', msg, result: { changed: true, msg, image_url: 'http://127.0.0.1:9/tsbm-sim-ramdisk.iso', media_slot: '/redfish/v1/Managers/1/VirtualMedia/2', boot_target: 'Cd', failed: false } };
    }
    case 2:
    case 11: {
      const reset = task === 2 ? 'On' : 'ForceRestart';
      const msg = `sent ResetType ${reset}; PowerState On`;
      return { status: 'changed', msg, result: { changed: true, msg, reset_type: reset, power_state: 'On', system_uuid: uuid, mac_addresses: macs, failed: false } };
    }
    case 3: {
      const msg = `SSH answered after 2s; system UUID and MAC ${macs[0]} match`;
      return {
        status: 'ok',
        msg,
        result: {
          changed: false, msg, identity: { method: 'uuid+mac', message: `system UUID and MAC ${macs[0]} match` }, product_uuid: uuid,
          macs, waited_s: 2, podman_version: 'podman version 5.2.2', mem_available_mib: 16000, failed: false,
        },
      };
    }
    case 4: {
      const msg = '/dev/vda (20480 MiB): matches root device hints name: "/dev/vda"';
      return { status: 'ok', msg, result: { changed: false, msg, device: '/dev/vda', size_bytes: 21474836480, size_mib: 20480, reason: 'matches root device hints name: "/dev/vda"', disks: [disk], failed: false } };
    }
    case 5: {
      const msg = `pulled ${image} (1400 MiB) in 0.${i % 10}s`;
      return { status: 'changed', msg, result: { changed: true, msg, ref: image, registry: 'registry.sim.tsbm:5000', image_id: hex('img', 64), bytes: 1468006400, duration_s: 0.2, failed: false } };
    }
    case 6: {
      const msg = `installed ${image} to /dev/vda (gpt, 2 partitions) in 0s`;
      const cmd = ['podman', 'run', '--rm', '--privileged', '--pid=host', '--pull=never', '-v', '/var/lib/containers:/var/lib/containers', '-v', '/dev:/dev', '-v', '/tmp:/tmp', image, 'bootc', 'install', 'to-disk', '--wipe', '--skip-fetch-check', '--root-size=19712M', `--root-ssh-authorized-keys=/tmp/tsbm-authorized-keys-${hex(host, 16)}`, '--disable-selinux', '/dev/vda'];
      return { status: 'changed', msg, result: { changed: true, msg, device: '/dev/vda', cmd, root_size_mib: 19712, partition_table: 'gpt', partitions: 2, failed: false } };
    }
    case 7: {
      const sha = hex(`cd-${host}`, 64);
      const msg = `config drive written to /dev/vda partition 3 (73728 bytes, sha256 ${sha.slice(0, 12)}…)`;
      return { status: 'changed', msg, result: { changed: true, msg, device: '/dev/vda', partition: 3, offset: 21406679040, size: 68140544, iso_size: 73728, sha256: sha, created: true, source: 'dict', failed: false } };
    }
    case 8:
      return { status: 'changed', msg: '', result: { changed: true, cmd: ['sync'], rc: 0, stdout: '', stderr: '', stdout_lines: [], stderr_lines: [], start: '2026-12-01T12:43:47.828Z', end: '2026-12-01T12:43:47.876Z', delta_ms: 48, failed: false } };
    case 9: {
      const msg = 'ejected http://127.0.0.1:9/tsbm-sim-ramdisk.iso';
      return { status: 'changed', msg, result: { changed: true, msg, media_slot: '/redfish/v1/Managers/1/VirtualMedia/2', failed: false } };
    }
    case 10:
      return {
        status: 'changed',
        msg: 'boot Hdd Continuous',
        result: {
          changed: true, msg: 'boot Hdd Continuous',
          diff: { before: '{"target":"None","enabled":"Disabled","mode":"UEFI"}', after: '{"BootSourceOverrideTarget":"Hdd","BootSourceOverrideEnabled":"Continuous"}' },
          boot_target: 'Hdd', boot_enabled: 'Continuous', failed: false,
        },
      };
    default:
      return { status: 'skipped', msg: 'Conditional result was False: when: wait_for_instance', result: { changed: false, failed: false, skipped: true, msg: 'Conditional result was False: when: wait_for_instance', false_condition: 'wait_for_instance' } };
  }
}

export interface FleetJournalOptions {
  nodes: number;
  runId?: string;
  start?: number;
  /** Nodes failing at "Pull the image" / unreachable at the agent wait / retrying BMC requests: every Nth node. */
  failEvery?: number;
  unreachableEvery?: number;
  retryEvery?: number;
  /** Killed after this many task results: the batch then running has started and has no results. */
  cutAfterStarts?: number;
  resumedFrom?: string;
  /** Extra vars as the journal header records them (already redacted). */
  extraVars?: Record<string, unknown>;
}

/** The records of one run, oldest first, as `tsbm run` journals them. */
export function fleetJournal(o: FleetJournalOptions): JournalRecord[] {
  const runId = o.runId ?? '20261201-120000-abcd';
  const t0 = o.start ?? Date.UTC(2026, 11, 1, 12, 0, 0);
  const hosts = Array.from({ length: o.nodes }, (_, i) => `node${String(i + 1).padStart(4, '0')}`);
  const out: JournalRecord[] = [];
  const options = { playbook: '/repo/playbooks/deploy-bootc.yml', forks: 50, extraVars: o.extraVars ?? {}, check: false };
  out.push({
    type: 'journal_start', time: t0, runId, version: '0.1.0', playbook: '/repo/playbooks/deploy-bootc.yml', playbookHash: hex('pb', 64),
    inventories: ['/repo/inventory.yml'], inventoryHash: hex('inv', 64), options, ...(o.resumedFrom ? { resumedFrom: o.resumedFrom } : {}),
  });
  out.push({ type: 'run_start', time: t0 + 5, runId, playbook: '/repo/playbooks/deploy-bootc.yml', version: '0.1.0', options });
  const play = 'Deploy a bootc image';
  out.push({ type: 'play_start', time: t0 + 6, play, hosts });
  const dead = new Set<string>();
  const stats: Record<string, { ok: number; changed: number; unreachable: number; failed: number; skipped: number; rescued: number; ignored: number }> = {};
  for (const h of hosts) stats[h] = { ok: 0, changed: 0, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0 };
  let now = t0 + 10;
  let starts = 0;
  for (let t = 0; t < TASKS.length; t++) {
    const task = TASKS[t]!;
    out.push({ type: 'task_start', time: now, play, task: task.name, taskId: task.id, module: task.module });
    let end = now;
    for (let i = 0; i < hosts.length; i++) {
      const host = hosts[i]!;
      if (dead.has(host)) continue;
      const base = { host, task: task.name, taskId: task.id };
      if (o.cutAfterStarts !== undefined && starts >= o.cutAfterStarts) {
        // killed: the rest of this batch started, and nothing after was written
        for (const rest of hosts.slice(i)) if (!dead.has(rest)) out.push({ type: 'host_task_start', time: now, host: rest, task: task.name, taskId: task.id });
        return out;
      }
      starts++;
      out.push({ type: 'host_task_start', time: now + (i % 50), ...base, args: { state: 'on' } });
      out.push({ type: 'log', time: now + (i % 50) + 1, ...base, level: 2, message: `Redfish session opened on 127.0.0.1:${40000 + i}` });
      const dur = task.ms + ((i * 37) % 400);
      let retries = 0;
      if (o.retryEvery && (i + 1) % o.retryEvery === 0 && task.module.startsWith('redfish')) {
        for (let a = 1; a <= 3; a++) {
          retries++;
          out.push({ type: 'retry', time: now + a * 50, ...base, attempt: a + 1, retries: 4, msg: `retry ${a}/4 in ${a * 50} ms (BMC 127.0.0.1:${40000 + i}): GET /redfish/v1/Systems/1: HTTP 503` });
        }
      }
      out.push({ type: 'progress', time: now + dur / 2, ...base, message: 'waiting for PowerState On', current: 0, total: 300, unit: 's', elapsedMs: dur / 2 });
      const fin = now + dur + retries * 100;
      end = Math.max(end, fin);
      if (o.failEvery && (i + 1) % o.failEvery === 0 && task.module === 'podman_pull') {
        const msg = `podman pull registry.sim.tsbm:5000/tsbm/bootc-demo:latest failed (rc 125): Error: copying system image from manifest list: reading blob sha256:${hex(host, 4)}: unexpected EOF (simulated pull failure); check the image reference, the registry and the ramdisk network`;
        out.push({ type: 'host_result', time: fin, ...base, status: 'failed', changed: false, msg, result: { failed: true, msg, rc: 125 }, durationMs: dur });
        stats[host]!.failed++;
        dead.add(host);
        continue;
      }
      if (o.unreachableEvery && (i + 1) % o.unreachableEvery === 0 && task.module === 'wait_agent') {
        const msg = `the ramdisk did not answer SSH on 127.0.0.1:${20000 + i} within ${6 + (i % 3)}s (connection refused); check that the node booted the ramdisk ISO and its network`;
        out.push({ type: 'host_result', time: fin, ...base, status: 'unreachable', changed: false, msg, durationMs: dur });
        stats[host]!.unreachable++;
        dead.add(host);
        continue;
      }
      const r = resultFor(t, host, i);
      out.push({ type: 'host_result', time: fin, ...base, status: r.status, changed: r.status === 'changed', msg: r.msg, result: r.result, durationMs: dur });
      stats[host]![r.status === 'skipped' ? 'skipped' : r.status === 'changed' ? 'changed' : 'ok']++;
      if (r.status === 'changed') stats[host]!.ok++;
    }
    now = end + 5;
  }
  const exitCode = [...Object.values(stats)].some((s) => s.unreachable) ? 4 : [...Object.values(stats)].some((s) => s.failed) ? 2 : 0;
  out.push({ type: 'recap', time: now, stats, durationMs: now - t0 });
  out.push({ type: 'run_end', time: now + 1, exitCode, durationMs: now + 1 - t0 });
  return out;
}

export function writeJournal(file: string, records: JournalRecord[]): void {
  writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
}
