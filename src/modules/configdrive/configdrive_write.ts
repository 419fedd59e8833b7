// configdrive_write: builds the config drive on the controller and puts it in a `config-2`
// partition at the end of the node's disk (reusing one that exists), verified by SHA-256.
import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { Type } from '../../schema/type-builder.js';
import { getPath } from '../../inventory/node-data.js';
import { hostError } from '../../module-api/ramdisk-exec.js';
import { TsbmError } from '../../errors.js';
import { type ModuleContext, type ModuleResult, defineModule } from '../../module-api/types.js';
import { nodeIdentity } from '../../configdrive/content.js';
import { createPartition, relocateGptBackup } from './configdrive-partition.js';
import { configDrivePartitions, diskAndTable, sha256At, writeAndReadBack } from './configdrive-disk-io.js';
import { gptBackupAtEnd } from '../../configdrive/partition-table.js';
import { placeConfigDrive } from '../../configdrive/placement.js';
import { resolveConfigDrive } from '../../configdrive/source.js';
import { limitFromVars } from '../../util/limits.js';
import { devicePathProblem } from '../../module-api/device-path.js';

const args = Type.Object(
  {
    device: Type.String({
      pattern: '^/dev/',
      description: 'Whole-disk device, normally `{{ root.device }}` from root_device',
    }),
    configdrive: Type.Optional(
      Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())], {
        description:
          'A dict (meta_data, network_data, user_data, vendor_data), a gzip+base64 ISO string, or an http(s) URL. Default: instance_info.configdrive; nothing to do when neither is set.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const configdriveWriteModule = defineModule({
  name: 'configdrive_write',
  summary: 'Write the config drive (config-2 ISO) into a partition at the end of the node disk',
  description:
    'Builds the ISO on the controller from instance_info.configdrive (dict, gzip+base64 string, or URL; at most 64 MiB), reuses a partition labelled config-2 (two is an error) or creates one in the last 64 MiB with sfdisk --append (GPT: sgdisk -e first when the backup header is short of the disk end; MBR: at most 3 existing primaries, below 2 TiB), streams the ISO to dd on stdin (no copy in /tmp), writes it by byte offset on the whole disk, reads it back through dd and compares SHA-256 on the controller. Returns partition, offset, size, sha256. Check mode reports the plan without touching the disk.',
  runsOn: 'target',
  args,
  checkMode: true,
  idempotent: true,
  example: `- name: Write the config drive
  configdrive_write:
    device: "{{ root.device }}"
  register: configdrive`,
  async run(ctx, a) {
    try {
      return await writeConfigDrive(ctx, a);
    } catch (e) {
      // Errors from the pure helpers carry no host/task yet: name them here.
      if (e instanceof TsbmError && !e.host) throw hostError(ctx, e.message, e.hint, e);
      throw e;
    }
  },
});

async function writeConfigDrive(ctx: ModuleContext, a: Static<typeof args>): Promise<ModuleResult> {
  // Before anything else (the config drive's URL is not fetched either): the schema's pattern
  // lets `/dev/../tmp/x` through; the rule bootc_install applies does not.
  const badDevice = devicePathProblem(a.device);
  if (badDevice) throw hostError(ctx, `refusing to write the config drive: the device ${badDevice}`, 'pass the whole disk as /dev/NAME, e.g. device: "{{ root.device }}"');
  const value = a.configdrive ?? getPath(ctx.vars, 'instance_info.configdrive');
  if (value === undefined || value === null || value === '') {
    return { changed: false, skipped: true, msg: 'no config drive: instance_info.configdrive is not set' };
  }
  const { iso, source } = await resolveConfigDrive(value, nodeIdentity(ctx.vars), {
    signal: ctx.signal,
    idleMs: limitFromVars(ctx.vars, 'downloadIdleMs'),
  });
  const sha256 = createHash('sha256').update(iso).digest('hex');
  const device = a.device;

  let disk: Awaited<ReturnType<typeof diskAndTable>>;
  try {
    disk = await diskAndTable(ctx, device);
  } catch (e) {
    // Check mode runs after an install that only said what it would do: a disk without a
    // partition table yet is what the real run would find partitioned by then.
    if (!ctx.check || !(e instanceof TsbmError)) throw e;
    return {
      changed: true,
      msg: `would write the config drive (${iso.length} bytes) to a new config-2 partition once the install has partitioned ${device} (no partition table to read now: ${e.message.replace(`${ctx.host}: `, '')})`,
      device,
      iso_size: iso.length,
      sha256,
      source,
    };
  }
  const { diskBytes, table } = disk;
  const labelled = await configDrivePartitions(ctx, device, table.partitions);
  let plan = placeConfigDrive(device, table, labelled, diskBytes, iso.length);
  ctx.log(
    `config drive (${source}, ${iso.length} bytes): ${plan.action === 'reuse' ? `reusing partition ${plan.partition.number}` : `new partition ${plan.number} at byte ${plan.offsetBytes}`}`,
  );

  const where = plan.action === 'reuse' ? plan.partition : plan;
  const facts = (created: boolean, p: { number: number; offsetBytes: number; sizeBytes: number }) => ({
    device,
    partition: p.number,
    offset: p.offsetBytes,
    size: p.sizeBytes,
    iso_size: iso.length,
    sha256,
    created,
    source,
  });
  if (plan.action === 'reuse') {
    const current = await sha256At(ctx, device, plan.partition.offsetBytes, iso.length);
    if (current === sha256) {
      return {
        changed: false,
        msg: `partition ${plan.partition.number} already holds this config drive`,
        ...facts(false, plan.partition),
      };
    }
  }
  if (ctx.check) {
    const num = plan.action === 'reuse' ? plan.partition.number : plan.number;
    return {
      changed: true,
      msg: `would ${plan.action === 'reuse' ? 'rewrite' : 'create'} config-2 partition ${num}`,
      ...facts(plan.action === 'create', { ...where, number: num }),
    };
  }

  let written: string | undefined;
  if (plan.action === 'create') {
    // A GPT written for a smaller disk (an image) keeps its backup header short of the end;
    // bootc partitions the disk it is on, so after it there is nothing to move.
    if (table.label === 'gpt' && !gptBackupAtEnd(table, diskBytes)) {
      plan = placeConfigDrive(device, await relocateGptBackup(ctx, device), [], diskBytes, iso.length);
      if (plan.action !== 'create') throw hostError(ctx, 'internal: placement changed after sgdisk -e');
    }
    // Fails unless the table then has the partition at the planned byte offset; writes the ISO
    // in the same round trip when the ramdisk can check that offset itself before dd runs.
    written = (await createPartition(ctx, device, plan, iso)).readBack;
  }
  const target =
    plan.action === 'reuse'
      ? { ...plan.partition }
      : { number: plan.number, offsetBytes: plan.offsetBytes, sizeBytes: plan.sizeBytes };

  // Straight from memory into dd: no copy of the ISO (it may hold secrets) ever sits in /tmp.
  const readBack = written ?? (await writeAndReadBack(ctx, device, iso, target.offsetBytes));
  if (readBack !== sha256) {
    throw hostError(
      ctx,
      `config drive read back from ${device} at byte ${target.offsetBytes} has SHA-256 ${readBack}, expected ${sha256}`,
      'the disk may be failing; check dmesg on the ramdisk',
    );
  }
  return {
    changed: true,
    msg: `config drive written to ${device} partition ${target.number} (${iso.length} bytes, sha256 ${sha256.slice(0, 12)}…)`,
    ...facts(plan.action === 'create', target),
  };
}
