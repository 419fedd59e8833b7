// wait_agent: waits for the node's ramdisk to accept SSH, then proves it is the machine the BMC
// controls before anything destructive happens (Ironic trusts whoever looks up; tsbm checks).
import { Type } from '../../schema/type-builder.js';
import type { Connection, ExecResult } from '../../connection/types.js';
import { DEPLOYS, type Deploy, IDENTITY_MODES, type IdentityMode } from '../../module-api/arg-names.js';
import { type BmcIdentity, bmcIdentity } from './bmc-identity.js';
import { hostError } from '../../module-api/ramdisk-exec.js';
import { MIB } from '../../module-api/disk.js';
import { HostKeyError, TsbmError, UnreachableError } from '../../errors.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { execSteps } from '../../connection/exec-steps.js';
import { checkIdentity, macsFromIpLink } from './identity.js';
import { fmtMiB, memAvailableBytes } from '../../module-api/memory.js';
import { notBootedReason } from './check-boot.js';
import { contractFailure, contractProbeArgv, degradedNote, judgeContract, needsFor } from './ramdisk-contract.js';
import { pacedPauseMs, stalledAfterMs, WaitTimeoutError, waitUntil } from '../../util/wait.js';
import { sshTargetOf, sshWaitProgress, sshWaitTimeoutHint } from './ssh-wait-words.js';
import { ramdiskHostKeyError } from './ramdisk-host-key.js';
import { consoleTail } from '../../util/console-tail.js';
import { type CallHome, callHomeHostKeyError, callHomeTarget, usesCallHome, waitForCallHome } from './call-home-wait.js';

const args = Type.Object(
  {
    timeout: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Seconds to wait for SSH (firmware POST of a few minutes, then a ramdisk booted from virtual media: see playbooks/README.md, "Waits")',
        default: 600,
      }),
    ),
    interval: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Seconds between attempts (at most a third of timeout; the first retries come sooner: after 0.5, 1 and 2 s)',
        default: 5,
      }),
    ),
    waiting_for: Type.Optional(
      Type.String({ default: 'the ramdisk', description: 'What answers SSH, as progress and errors name it (e.g. the installed system)' }),
    ),
    stall_hint: Type.Optional(
      Type.String({
        description:
          'What the wait is for and which variables change it, said when it has seen no change for long (a fifth of timeout, 15 s to 2 min) and when it times out; default: ssh_host and ssh_port say where, timeout how long',
      }),
    ),
    connect_timeout: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Seconds one connection attempt may take', default: 10 }),
    ),
    identity: Type.Optional(
      Type.Union(
        IDENTITY_MODES.map((m) => Type.Literal(m)),
        {
          description:
            'auto: check whatever the BMC reported (UUID and/or MACs; no product_uuid on the ramdisk falls back to MACs); uuid / mac / both: require those; any: either one matching suffices; off: no check',
          default: 'auto',
        },
      ),
    ),
    system_uuid: Type.Optional(
      Type.String({
        description: "The BMC's System UUID; default: a registered redfish_power result's system_uuid",
      }),
    ),
    mac_addresses: Type.Optional(
      Type.Array(Type.String(), {
        description: "The BMC's NIC MACs; default: a registered redfish_power result's mac_addresses",
      }),
    ),
    console_log: Type.Optional(
      Type.String({
        description:
          "A file on the controller that captures the node's serial console (a console server's log; the lab's VMs write one each): a wait that times out shows its last lines. Empty: none",
      }),
    ),
    bmc_result: Type.Optional(
      Type.String({
        description:
          'Name of the registered redfish_power result to read system_uuid / mac_addresses from (default: the first one found)',
      }),
    ),
    deploy: Type.Optional(
      Type.Union(
        DEPLOYS.map((d) => Type.Literal(d)),
        {
          description:
            'The deploy that follows (bootc, image, ramdisk; undeploy for the erase of undeploy.yml): fail unless the ramdisk has every program it needs (docs/ramdisk.md), checked in the same probe; unset: no check',
        },
      ),
    ),
    require_podman: Type.Optional(
      Type.Boolean({ description: 'Fail when the ramdisk has no podman', default: false }),
    ),
    min_memory_mib: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Fail when MemAvailable is below this' }),
    ),
    product_uuid_path: Type.Optional(
      Type.String({
        default: '/sys/class/dmi/id/product_uuid',
        description: 'Simulated ramdisks override it',
      }),
    ),
    meminfo_path: Type.Optional(
      Type.String({ default: '/proc/meminfo', description: 'Simulated ramdisks override it' }),
    ),
  },
  { additionalProperties: false },
);

export const waitAgentModule = defineModule({
  name: 'wait_agent',
  summary: "Wait for the node's ramdisk to accept SSH, then verify it is the right machine",
  description:
    "Connects to the host's SSH target until it answers (progress shows elapsed time and the last error), then compares the ramdisk's /sys/class/dmi/id/product_uuid and MACs (ip -j link) with the BMC's System UUID and MACs. A mismatch fails the host before any disk is touched. With deploy set, checks in the same round trip that the ramdisk has every program that deploy needs (docs/ramdisk.md) and fails naming all that are missing. Sets facts.ramdisk_podman_version (podman_pull's flags) and, for deploy: bootc, facts.ramdisk_selinux (getenforce's answer or absent, for bootc_install), ramdisk_arch (uname -m) and, with min_memory_mib, ramdisk_mem_available_bytes (podman_pull's memory check). Optionally checks podman and MemAvailable.",
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Wait for the ramdisk
  wait_agent:
    timeout: 1800
    bmc_result: power
    deploy: bootc
    require_podman: true
    min_memory_mib: 4096
  resume: rerun`,
  async run(ctx, a) {
    const timeoutS = a.timeout ?? 600;
    const mode: IdentityMode = a.identity ?? 'auto';
    const bmc = await bmcFacts(
      ctx,
      a.bmc_result,
      mode !== 'off' && a.system_uuid === undefined && a.mac_addresses === undefined,
    );
    const bmcUuid = a.system_uuid ?? bmc.uuid;
    const bmcMacs = a.mac_addresses ?? bmc.macs;
    const start = Date.now();
    let conn: Connection;
    let callHome: CallHome | undefined;
    if (ctx.check) {
      // Check mode boots nothing: a node that is Off (or that this run would power on first)
      // has no ramdisk to ask, and the steps after this one report what they would do after
      // boot. A ramdisk already up is checked for real (read-only): identity, contract, memory.
      const would = `would wait up to ${timeoutS}s for the ramdisk to answer SSH, then check identity (${mode})`;
      const registered = a.bmc_result ? ctx.vars[a.bmc_result] : undefined;
      const notBooted = await notBootedReason(ctx, registered);
      if (notBooted)
        return { changed: false, msg: `${would}: ${notBooted}`, tsbm_check_after_boot: notBooted };
      try {
        conn = await ctx.connect({ timeoutMs: (a.connect_timeout ?? 10) * 1000 });
      } catch (e) {
        const why = `no ramdisk answers now (${(e as Error).message.replace(`${ctx.host}: `, '')}); the run would boot it`;
        return { changed: false, msg: `${would}: ${why}`, tsbm_check_after_boot: why };
      }
    } else {
      // A ramdisk given a callback by ramdisk_media, on a host without ssh_host: its report says
      // where it is and which host key it made at this boot, the only key accepted.
      const reg = usesCallHome(ctx);
      if (reg) callHome = callHomeTarget(await waitForCallHome(ctx, reg, timeoutS));
      const left = Math.max(1, timeoutS - Math.round((Date.now() - start) / 1000));
      conn = await waitForSsh(ctx, callHome ? left : timeoutS, a.interval ?? 5, a.connect_timeout ?? 10, {
        what: a.waiting_for ?? 'the ramdisk',
        hint: a.stall_hint,
        consoleLog: a.console_log || undefined,
      }, callHome);
    }
    const waitedS = Math.round((Date.now() - start) / 1000);
    try {
      // Everything the checks read, in one round trip (all read-only).
      const uuidArgv = ['cat', a.product_uuid_path ?? '/sys/class/dmi/id/product_uuid'];
      const linkArgv = ['ip', '-j', 'link'];
      const deploy: Deploy | undefined = a.deploy;
      const needs = deploy ? needsFor(deploy, ctx.vars) : [];
      const contractArgv = deploy ? contractProbeArgv(needs) : undefined;
      const wantsPodman = a.require_podman || needs.some((n) => n.anyOf.includes('podman'));
      const podmanArgv = wantsPodman ? ['podman', '--version'] : undefined;
      const memArgv = a.min_memory_mib ? ['cat', a.meminfo_path ?? '/proc/meminfo'] : undefined;
      // The SELinux mode bootc_install passes on, read here in the same round trip (a missing
      // getenforce is no SELinux): bootc_install then needs no round trip before the install.
      const selinuxArgv = deploy === 'bootc' ? ['getenforce'] : undefined;
      // The architecture picks the image's size for podman_pull's memory check, which with it
      // (and MemAvailable, read above) needs no round trip of its own before the pull.
      const archArgv = deploy === 'bootc' ? ['uname', '-m'] : undefined;
      const steps = [uuidArgv, linkArgv, contractArgv, podmanArgv, memArgv, selinuxArgv, archArgv].filter(
        (x): x is string[] => x !== undefined,
      );
      const results = await execSteps(conn, steps);
      const resultOf = (argv: string[]) => results[steps.indexOf(argv)] as ExecResult;
      const uuidRes = resultOf(uuidArgv);
      const link = resultOf(linkArgv);
      const hostUuid = uuidRes.rc === 0 && uuidRes.stdout.trim() ? uuidRes.stdout.trim() : undefined;
      let hostMacs: string[] = [];
      if (link.rc === 0) {
        try {
          hostMacs = macsFromIpLink(link.stdout);
        } catch {
          ctx.warn('ip -j link on the ramdisk gave no JSON; MACs unknown');
        }
      }
      const verdict = checkIdentity(mode, {
        ...(bmcUuid ? { bmcUuid } : {}),
        bmcMacs,
        ...(hostUuid ? { hostUuid } : {}),
        hostMacs,
      });
      if (!verdict.ok) {
        throw hostError(
          ctx,
          `refusing to deploy: ${verdict.message}`,
          'the ramdisk that answered is not the machine this BMC controls (address reused?); fix ssh_host / the inventory, or set identity: off if the BMC data is known wrong',
        );
      }
      if (verdict.method === 'none') ctx.warn(`${ctx.host}: ${verdict.message}`);
      // The contract, still before anything destructive: one line naming everything missing.
      let contract: ReturnType<typeof judgeContract> | undefined;
      if (deploy && contractArgv) {
        const probe = resultOf(contractArgv);
        if (probe.rc !== 0) {
          throw hostError(
            ctx,
            `cannot check what the ramdisk has for the ${deploy} deploy (rc ${probe.rc}): ${(probe.stderr || probe.stdout).trim().split('\n').slice(-2).join(' | ') || 'no output'}`,
            'the ramdisk needs a POSIX sh (docs/ramdisk.md)',
          );
        }
        const pv = podmanArgv ? resultOf(podmanArgv) : undefined;
        contract = judgeContract(needs, probe.stdout, pv?.rc === 0 ? pv.stdout : undefined);
        const failure = contractFailure(deploy, contract);
        if (failure) {
          throw hostError(
            ctx,
            failure,
            "add them to the ramdisk image (docs/ramdisk.md lists what each deploy needs), or set wait_agent's deploy to the deploy this playbook does",
          );
        }
        const note = degradedNote(contract);
        if (note) ctx.log(`${ctx.host}: ${note}`, 1);
      }
      const facts: Record<string, unknown> = {
        identity: { method: verdict.method, message: verdict.message },
        product_uuid: hostUuid ?? null,
        macs: hostMacs,
        waited_s: waitedS,
        ...(callHome ? { call_home: { address: callHome.connectedTo ?? callHome.addresses[0], host_key_fingerprint: callHome.fingerprint, reported_after_s: callHome.reportedAfterS } } : {}),
        ...(deploy && contract
          ? {
              ramdisk_contract: { deploy, missing_optional: contract.degraded.map((n) => n.anyOf.join('/')) },
            }
          : {}),
      };
      if (podmanArgv) {
        const pv = resultOf(podmanArgv);
        if (pv.rc !== 0) {
          const said = (pv.stderr || pv.stdout).trim().split('\n').slice(-3).join(' | ');
          throw hostError(
            ctx,
            `the ramdisk has no working podman (\`podman --version\` exited ${pv.rc}${said ? `: ${said}` : ''})`,
            'use a ramdisk image with podman (IPA ramdisks with the podman element)',
          );
        }
        facts.podman_version = pv.stdout.trim();
      }
      let memAvailable: number | undefined;
      if (a.min_memory_mib && memArgv) {
        const mi = resultOf(memArgv);
        const avail = mi.rc === 0 ? memAvailableBytes(mi.stdout) : undefined;
        if (avail === undefined)
          throw hostError(
            ctx,
            'cannot read MemAvailable on the ramdisk',
            'check /proc/meminfo on the ramdisk',
          );
        facts.mem_available_mib = Math.floor(avail / MIB);
        memAvailable = avail;
        if (avail < a.min_memory_mib * MIB) {
          throw hostError(
            ctx,
            `the ramdisk has ${fmtMiB(avail)} available, ${a.min_memory_mib} MiB needed`,
            "give the node more RAM, or lower the threshold: agent_min_memory_mib in the inventory (the shipped playbooks' wait-agent role passes it as min_memory_mib)",
          );
        }
      }
      // The checked connection serves the next tasks; only a host that failed its checks drops it.
      if (ctx.keepConnection && !ctx.check) ctx.keepConnection(conn, { pinned: callHome !== undefined });
      else await conn.close().catch(() => undefined);
      // The ramdisk's podman version also goes into the host's `facts`: podman_pull decides its
      // flags from it instead of starting podman once more to read its --help.
      const ramdiskFacts: Record<string, string> = {};
      if (typeof facts.podman_version === 'string') ramdiskFacts.ramdisk_podman_version = facts.podman_version;
      if (selinuxArgv) ramdiskFacts.ramdisk_selinux = selinuxFact(resultOf(selinuxArgv));
      const arch = archArgv ? resultOf(archArgv) : undefined;
      if (arch?.rc === 0 && arch.stdout.trim()) ramdiskFacts.ramdisk_arch = arch.stdout.trim();
      if (memAvailable !== undefined) ramdiskFacts.ramdisk_mem_available_bytes = String(memAvailable);
      const hostFacts = Object.keys(ramdiskFacts).length ? { facts: ramdiskFacts } : {};
      const where = callHome ? `the ramdisk called home after ${callHome.reportedAfterS}s; SSH at ${callHome.connectedTo} (its reported key) answered after ${waitedS}s` : `SSH answered after ${waitedS}s`;
      return { changed: false, msg: `${where}; ${verdict.message}`, ...facts, ...hostFacts };
    } catch (e) {
      await conn.close().catch(() => undefined);
      throw e;
    }
  },
});

/**
 * What getenforce said (Enforcing, Permissive, Disabled), or `absent` when the ramdisk has no
 * getenforce; anything else (it failed) is `unknown`, and bootc_install asks again.
 */
function selinuxFact(r: ExecResult): string {
  if (r.rc === 127) return 'absent';
  const said = r.stdout.trim();
  return r.rc === 0 && /^(Enforcing|Permissive|Disabled)$/.test(said) ? said : 'unknown';
}

async function waitForSsh(
  ctx: ModuleContext,
  timeoutS: number,
  intervalS: number,
  connectS: number,
  said: { what: string; hint: string | undefined; consoleLog?: string | undefined },
  callHome?: CallHome,
): Promise<Connection> {
  const target = callHome ? `${callHome.addresses.join(' or ')} (reported when it called home)` : sshTargetOf(ctx);
  const stalled = stalledAfterMs(timeoutS * 1000);
  // A connection setting tsbm cannot use (a bad ssh_* value, an unreadable key) is not a ramdisk
  // still booting, nor is a host key refused (a ramdisk makes a new one every boot): no retry
  // fixes them, so they fail now instead of after the whole timeout.
  let settingError: TsbmError | undefined;
  let attempt = 0;
  const tryConnect = async (): Promise<Connection | null> => {
    // Every address the ramdisk reported, in turn (IPv4 first).
    const address = callHome ? callHome.addresses[attempt++ % callHome.addresses.length] : undefined;
    try {
      const conn = await ctx.connect({ timeoutMs: connectS * 1000, ...(callHome ? { address, hostKeyFingerprint: callHome.fingerprint } : {}) });
      if (callHome) callHome.connectedTo = address;
      return conn;
    } catch (e) {
      if (e instanceof TsbmError && (e.kind === 'parse' || e.kind === 'options' || e.kind === 'template' || (e instanceof UnreachableError && e.setting))) {
        settingError = e;
        return null;
      }
      if (e instanceof HostKeyError) {
        settingError = callHome ? callHomeHostKeyError(ctx, e, address ?? '') : ramdiskHostKeyError(ctx, e);
        return null;
      }
      throw e;
    }
  };
  // A short timeout still gets several attempts.
  const intervalMs = Math.min(intervalS * 1000, Math.max(1000, Math.floor((timeoutS * 1000) / 3)));
  let conn: Connection | null;
  try {
    conn = await waitUntil(tryConnect, {
      timeoutMs: timeoutS * 1000,
      intervalMs,
      // A ramdisk that is a moment from up (the node was powered on just before) is seen within a
      // quarter second, a slow one at most ~10% late: a refused connect costs little. A doubling
      // backoff (0.5, 1, 2, 4 s) made a ramdisk up at 1.6 s wait until 3.5 s.
      pauseMs: ({ elapsedMs, probeMs }) => pacedPauseMs({ elapsedMs, probeMs, intervalMs }),
      signal: ctx.signal,
      // a connection that comes up after the wait was stopped (Ctrl-C) is closed, not leaked
      discard: (c) => void c?.close().catch(() => {}),
      what: `${ctx.host}'s ramdisk to accept SSH`,
      onProgress: (state) => ctx.progress({ message: sshWaitProgress(state, { ...said, target, stalledAfterMs: stalled }) }),
    });
  } catch (e) {
    if (e instanceof WaitTimeoutError) {
      throw hostError(
        ctx,
        `${said.what} did not accept SSH within ${timeoutS}s (waited ${Math.round(e.elapsedMs / 1000)}s)${e.lastError instanceof Error ? `; last error: ${e.lastError.message}` : ''}${consoleSays(said.consoleLog)}`,
        `${sshWaitTimeoutHint({ ...said, target })}; check the node's console: did it boot, does ${said.what} carry the controller's public key, is its address reachable`,
        e,
      );
    }
    throw e;
  }
  if (conn === null) throw settingError as TsbmError;
  return conn;
}

/** Where the node's console stopped: its captured log's last lines, for a wait that failed. */
function consoleSays(file: string | undefined): string {
  if (!file) return '';
  const lines = consoleTail(file, 15);
  return lines.length ? `\nthe node's console (${file}) ends with:\n${lines.map((l) => `  | ${l}`).join('\n')}` : `; its console log ${file} is empty`;
}

/**
 * system_uuid / mac_addresses from a registered redfish_power result in the host's vars; when
 * there is none (a run started at a later tag, a resume) and `ask` is set, from the BMC itself.
 */
async function bmcFacts(ctx: ModuleContext, name: string | undefined, ask: boolean): Promise<BmcIdentity> {
  const found = registeredBmcFacts(ctx, name);
  if (found.uuid || found.macs.length > 0 || !ask) return found;
  const asked = await bmcIdentity(ctx);
  if (asked) {
    ctx.log(
      `no registered BMC result${name ? ` "${name}"` : ''} (task skipped or resumed?): identity read from the BMC`,
      1,
    );
    return asked;
  }
  if (name)
    ctx.warn(
      `bmc_result "${name}" is not set (task skipped or resumed?) and the host has no driver_info to ask the BMC`,
    );
  return found;
}

function registeredBmcFacts(ctx: ModuleContext, name: string | undefined): BmcIdentity {
  const named = name ? ctx.vars[name] : undefined;
  const candidates = named !== undefined ? [named] : Object.values(ctx.vars);
  for (const v of candidates) {
    if (!v || typeof v !== 'object') continue;
    const r = v as Record<string, unknown>;
    const uuid = typeof r.system_uuid === 'string' && r.system_uuid ? r.system_uuid : undefined;
    const macs = Array.isArray(r.mac_addresses)
      ? r.mac_addresses.filter((m): m is string => typeof m === 'string')
      : [];
    if (uuid || macs.length) return { ...(uuid ? { uuid } : {}), macs };
  }
  return { macs: [] };
}
