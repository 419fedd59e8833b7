// root_device: picks the disk to install on, with Ironic's root device hints.
import { Type } from '../../schema/type-builder.js';
import { describeDisk, MIB } from '../../module-api/disk.js';
import { firstSet } from '../../inventory/node-data.js';
import { hostError, mustExec } from '../../module-api/ramdisk-exec.js';
import { HINT_NAMES } from '../../module-api/arg-names.js';
import { defineModule } from '../../module-api/types.js';
import { parseLsblk } from '../../module-api/lsblk.js';
import { HintError, chooseRootDevice, parseHints } from '../../module-api/root-device-hints.js';

const args = Type.Object(
  {
    hints: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
        description: `Root device hints with Ironic's names (${HINT_NAMES.join(', ')}) and operators (==, !=, >=, <=, >, <, s==, s!=, s>=, s<=, s>, s<, <in>, <all-in>, <or>); size is in GiB. Default: instance_info.root_device, then properties.root_device.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const rootDeviceModule = defineModule({
  name: 'root_device',
  summary: 'Choose the install disk on the ramdisk with Ironic root device hints',
  description:
    'Lists block devices with one `lsblk -J -b -O` call, skips loop, sr, fd, mem, zram and read-only devices (unless a `name`/`by_path` hint names one), and applies the hints. Without hints: the smallest disk of at least 4 GiB. Returns device, size_bytes, size_mib, reason and disks. Reads only; safe in check mode.',
  runsOn: 'target',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Find the root disk
  root_device:
    hints:
      size: ">= 100"
      rotational: false
  register: root`,
  async run(ctx, a) {
    const raw = firstSet(a.hints, ctx.vars, 'instance_info.root_device', 'properties.root_device');
    let hints: ReturnType<typeof parseHints>;
    try {
      hints = parseHints(raw);
    } catch (e) {
      throw hostError(
        ctx,
        (e as Error).message,
        'fix root_device hints (instance_info.root_device / properties.root_device)',
      );
    }
    const r = await mustExec(
      ctx,
      ctx.exec.bind(ctx),
      ['lsblk', '-J', '-b', '-O'],
      'the ramdisk needs util-linux lsblk with JSON output',
    );
    let disks = parseLsblk(r.stdout);
    if (hints.some((h) => h.name === 'by_path')) {
      // lsblk has no by-path column; one listing of the symlinks is enough.
      const links = await ctx.exec([
        'find',
        '/dev/disk/by-path',
        '-mindepth',
        '1',
        '-maxdepth',
        '1',
        '-printf',
        '%p\\t%l\\n',
      ]);
      const byTarget = new Map<string, string>();
      for (const line of links.stdout.split('\n')) {
        const [p, l] = line.split('\t');
        if (p && l) byTarget.set(l.split('/').pop() ?? '', p);
      }
      disks = disks.map((d) => {
        const bp = byTarget.get(d.kname);
        return bp ? { ...d, byPath: bp } : d;
      });
    }
    let choice: ReturnType<typeof chooseRootDevice>;
    try {
      choice = chooseRootDevice(disks, hints);
    } catch (e) {
      if (e instanceof HintError) {
        throw hostError(
          ctx,
          e.message,
          'adjust the root device hints to one of the disks listed, or check the hardware',
        );
      }
      throw e;
    }
    const d = choice.disk;
    return {
      changed: false,
      msg: `${d.name} (${Math.floor(d.sizeBytes / MIB)} MiB): ${choice.reason}`,
      device: d.name,
      size_bytes: d.sizeBytes,
      size_mib: Math.floor(d.sizeBytes / MIB),
      reason: choice.reason,
      disks: disks.map((x) => ({ ...x, summary: describeDisk(x) })),
    };
  },
});
