// The simulated deploy on a machine without gdisk's sgdisk nor util-linux's sfdisk and partx
// (a minimal Debian has only partx): TSBM_SIM_STANDINS=all makes the ramdisk's sgdisk, sfdisk
// and partx tsbm's TypeScript stand-ins (packages/lab/src/gpt) even here. The simulated bootc partitions
// with sfdisk (or copies the lab's template), configdrive_write reads the table with sfdisk
// --json and partx and appends config-2 with sfdisk --append; a bootc deploy runs no sgdisk at
// all. The resulting disks must read back right with the lab's GPT reader and, where installed,
// util-linux's sfdisk and gdisk's sgdisk -v.
import { execFile, execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { stateArgs } from '../helpers/fault-cli.js';
import { forceStandins } from '../helpers/force-standins.js';
import { buildGptImage, imageDataSha, type ImageServer, partitionDataSha, serveFiles } from '../helpers/image-fixture.js';
import { readDiskLayout } from '../../packages/lab/src/lab/disk-layout.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const TSBM = join(ROOT, 'bin', 'tsbm.js');
const CLIS = [...['sgdisk', 'sfdisk', 'partx'].map((t) => join(ROOT, 'packages', 'lab', 'dist', 'gpt', `${t}-cli.js`)), join(ROOT, 'packages', 'lab', 'dist', 'curl', 'curl-cli.js')];
const SFDISK = ['/usr/sbin/sfdisk', '/sbin/sfdisk'].find((p) => existsSync(p));
const SGDISK = ['/usr/sbin/sgdisk', '/sbin/sgdisk'].find((p) => existsSync(p));

interface SfdiskJson {
  partitiontable: {
    label: string;
    lastlba: number;
    partitions: { start: number; size: number; type: string; name?: string }[];
  };
}

describe.skipIf(!CLIS.every((c) => existsSync(c)))(
  'simulated deploys on a ramdisk whose sgdisk, sfdisk, partx and curl are the TypeScript stand-ins (needs `npm run build`)',
  () => {
    let dir: string;
    let lab: Lab;
    let restore: () => void = () => undefined;
    let server: ImageServer | undefined;
    beforeAll(async () => {
      restore = forceStandins('all');
      dir = mkdtempSync(join(tmpdir(), 'tsbm-standins-'));
      lab = await startLab({ nodes: 2, dir, bootDelayMs: 200, powerDelayMs: 50 });
    });
    afterAll(async () => {
      await lab?.close();
      await server?.close();
      restore();
      rmSync(dir, { recursive: true, force: true });
    });

    it('deploy-bootc.yml succeeds; ESP, root and config-2 are where bootc and configdrive_write put them', async () => {
      const r = await run(
        'node',
        [TSBM, 'run', join(ROOT, 'playbooks/deploy-bootc.yml'), '-i', lab.inventory, '--output', 'json', ...stateArgs(dir).args],
        {
          cwd: dir,
          env: stateArgs(dir).env,
          maxBuffer: 64 * 1024 * 1024,
          timeout: 240_000,
        },
      ).then(
        (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      const failed = r.stdout
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as { type: string; status?: string; host?: string; task?: string; msg?: string },
        )
        .filter((e) => e.type === 'host_result' && (e.status === 'failed' || e.status === 'unreachable'));
      expect(failed).toEqual([]);
      expect(r.code, r.stderr).toBe(0);
      // bootc's table: sfdisk on the first node to install (and on any that got there before it
      // had saved the template), a copy of the lab's template (sim-bootc's GPT cache) on the
      // others, which then share its disk GUID; the node that saved it has it too.
      const templates = readdirSync(join(lab.dir, 'cache'));
      expect(templates).toHaveLength(1); // same disk and root size on both nodes: one template
      const [template] = templates;
      const templateGuid = readFileSync(join(lab.dir, 'cache', template!)).subarray(512 + 56, 512 + 72);
      const guids = lab.nodes.map((n) => {
        const fd = openSync(join(n.root, 'dev/vda'), 'r');
        const guid = Buffer.alloc(16);
        readSync(fd, guid, 0, 16, 512 + 56);
        closeSync(fd);
        return guid;
      });
      expect(guids.filter((g) => g.equals(templateGuid)).length).toBeGreaterThanOrEqual(1);
      for (const n of lab.nodes) {
        // The stand-ins, first on the PATH, log every call (forced, they never hand over to the
        // machine's tools). No sgdisk ran, not even -e: bootc's table already ends at the disk end.
        expect(existsSync(join(n.root, 'sim/sgdisk-standin-args'))).toBe(false);
        expect(n.cfg.toolDirs.some((d) => d.endsWith('/ramdisk/standin'))).toBe(true);
        const disk = join(n.root, 'dev/vda');
        const sfdiskRuns = readFileSync(join(n.root, 'sim/sfdisk-standin-args'), 'utf8').split('\n').filter(Boolean);
        // configdrive_write: the table (twice: placement, then the reuse check) and the append.
        expect(sfdiskRuns.filter((l) => l === `--json ${disk}`).length).toBeGreaterThanOrEqual(1);
        expect(sfdiskRuns).toContain(`--append --no-reread --no-tell-kernel ${disk}`);
        expect(readFileSync(join(n.root, 'sim/partx-standin-args'), 'utf8')).toContain(`-P -o NR,START,SECTORS,NAME,SCHEME ${disk}\n`);

        const layout = await n.diskLayout();
        expect(layout.partitions.map((p) => [p.name, p.typeGuid])).toEqual([
          ['EFI-SYSTEM', 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B'],
          ['root', '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709'],
          ['config-2', '0FC63DAF-8483-4772-8E79-3D69D8477DE4'],
        ]);
        const [esp, root, cfg] = layout.partitions;
        expect(esp!.startBytes).toBe(1024 * 1024);
        expect(esp!.sizeBytes).toBe(512 * 1024 * 1024);
        expect(root!.startBytes).toBe(esp!.startBytes + esp!.sizeBytes);
        expect(cfg!.startBytes).toBeGreaterThanOrEqual(n.cfg.diskBytes - 66 * 1024 * 1024);
        expect(cfg!.startBytes + cfg!.sizeBytes).toBeLessThanOrEqual(n.cfg.diskBytes - 33 * 512);

        if (SFDISK) {
          const j = JSON.parse(execFileSync(SFDISK, ['--json', disk], { encoding: 'utf8' })) as SfdiskJson;
          expect(j.partitiontable.label).toBe('gpt');
          // The backup header sits at the disk end (where bootc's table put it).
          expect(j.partitiontable.lastlba).toBe(n.cfg.diskBytes / 512 - 34);
          expect(j.partitiontable.partitions.map((p) => [p.name, p.start * 512, p.size * 512])).toEqual(
            layout.partitions.map((p) => [p.name, p.startBytes, p.sizeBytes]),
          );
        }
        if (SGDISK)
          expect(execFileSync(SGDISK, ['-v', disk], { encoding: 'utf8' })).toMatch(/No problems found/);
      }
    }, 240_000);

    it('deploy-image.yml streams a raw image with the curl stand-in, moves the backup GPT with the sgdisk stand-in, appends config-2', async () => {
      const img = buildGptImage(mkdtempSync(join(dir, 'img-')), 48);
      server = await serveFiles([img.raw]);
      const doc = parse(readFileSync(lab.inventory, 'utf8')) as { all: { vars: { instance_info: Record<string, unknown> } } };
      const base = doc.all.vars.instance_info;
      doc.all.vars.instance_info = {
        root_device: base.root_device,
        configdrive: base.configdrive,
        image_source: `${server.url}/disk.raw`,
        image_os_hash_algo: 'sha256',
        image_os_hash_value: img.sha256,
      };
      const inv = join(dir, 'image.yml');
      writeFileSync(inv, stringify(doc));
      // Both nodes run the bootc instance the first test installed (their records say active):
      // writing a raw image over them is a rebuild, asked for as an operator would.
      const state = stateArgs(dir);
      const r = await run('node', [TSBM, 'run', join(ROOT, 'playbooks/deploy-image.yml'), '-i', inv, '--output', 'plain', '--rebuild', ...state.args], {
        cwd: dir,
        env: state.env,
        maxBuffer: 64 * 1024 * 1024,
        timeout: 240_000,
      }).then(
        (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
      expect(server.downloads('disk.raw')).toBe(2);
      for (const n of lab.nodes) {
        const disk = join(n.root, 'dev/vda');
        expect(partitionDataSha(disk, img)).toBe(imageDataSha(img));
        const layout = await readDiskLayout(disk);
        expect(layout.partitions.map((p) => p.name)).toEqual(['esp', 'root', 'config-2']);
        expect(layout.partitions[2]!.startBytes).toBeGreaterThan(n.cfg.diskBytes - 66 * 1024 * 1024);
        expect(readFileSync(join(n.root, 'sim/curl-standin-args'), 'utf8')).toMatch(/^-fsSL --connect-timeout \d+ -K -$/m);
        expect(readFileSync(join(n.root, 'sim/sgdisk-standin-args'), 'utf8')).toContain(`-e ${disk}\n`);
        if (SGDISK) expect(execFileSync(SGDISK, ['-v', disk], { encoding: 'utf8' })).toMatch(/No problems found/);
      }
    }, 240_000);
  },
);
