// The inspector against images the real qemu-img made: it agrees with qemu-img on every format
// tsbm recognises, and it names each hostile qcow2 (backing file, data file, json: backing)
// that qemu-img itself would follow.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectFile } from '../../src/images/inspect/local-file.js';
import { qemuImgConvertArgv, qemuImgInfoArgv } from '../../src/images/inspect/qemu-img.js';
import { hostileQcow2s } from '../helpers/hostile-images.js';
import { buildGptImage } from '../helpers/image-fixture.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

describe('the image inspector on qemu-img images', () => {
  it('recognises what qemu-img create makes, with the virtual size qemu-img reports', async () => {
    const dir = scratch('tsbm-inspect-');
    const made: Array<[string, string, string[]]> = [
      ['qcow2', 'qcow2', []],
      ['qcow2', 'qcow2', ['-o', 'compat=0.10']],
      ['vmdk', 'vmdk', []],
      ['vhd', 'vpc', []],
      ['vhdx', 'vhdx', []],
      ['vdi', 'vdi', []],
      ['qed', 'qed', []],
    ];
    for (const [format, driver, opts] of made) {
      const f = join(dir, `${driver}-${opts.length}.img`);
      execFileSync('qemu-img', ['create', '-f', driver, ...opts, f, '64M'], { stdio: 'ignore' });
      const qemu = JSON.parse(execFileSync('qemu-img', ['info', '--output=json', '-f', driver, f], { encoding: 'utf8' })) as { 'virtual-size': number };
      const i = await inspectFile(f);
      expect(i.format, `${driver} ${opts.join(' ')}`).toBe(format);
      expect(i.unsafe, driver).toEqual([]);
      if (i.virtualSize !== undefined) expect(i.virtualSize, driver).toBe(qemu['virtual-size']);
    }
    const gpt = buildGptImage(dir, 24);
    expect(await inspectFile(gpt.raw)).toEqual({ format: 'raw', table: 'gpt', unsafe: [] });
    const empty = join(dir, 'empty.raw');
    writeFileSync(empty, '');
    expect((await inspectFile(empty)).format).toBe('raw');
  });

  it('names the controller file each hostile qcow2 points at', async () => {
    const dir = scratch('tsbm-inspect-');
    for (const h of hostileQcow2s(dir)) {
      const i = await inspectFile(h.file);
      expect(i.format).toBe('qcow2');
      expect(i.unsafe.join('; '), h.kind).toContain(h.secret);
      if (h.kind === 'json') expect(i.unsafe.join('; ')).toMatch(/backing file given as a json: specification/);
      if (h.kind === 'data_file') expect(i.unsafe.join('; ')).toMatch(/keeps its data in an external data file; it names an external data file/);
    }
  });
});

describe('qemu-img runs limited and told the format', () => {
  it('the shell sets RLIMIT_CPU and RLIMIT_AS before it execs qemu-img: 30 s and 1 GiB for info, more for convert', () => {
    const limitsOf = (argv: string[]) => {
      const at = argv.indexOf('qemu-img');
      const probe = [...argv.slice(0, at), 'sh', '-c', 'echo "$(ulimit -t) $(ulimit -v)"'];
      return execFileSync(probe[0]!, probe.slice(1), { encoding: 'utf8' }).trim();
    };
    const info = qemuImgInfoArgv('qcow2', '/img/x.qcow2');
    expect(info.slice(info.indexOf('qemu-img'))).toEqual(['qemu-img', 'info', '--output=json', '-f', 'qcow2', '/img/x.qcow2']);
    expect(limitsOf(info)).toBe(`30 ${1024 * 1024}`);
    const conv = qemuImgConvertArgv({ format: 'qcow2', target: 'host_device', source: '/tmp/a', dest: '/dev/sda', existingTarget: true, timeoutMs: 7200_000 });
    expect(conv.slice(conv.indexOf('qemu-img'))).toEqual(['qemu-img', 'convert', '-p', '-n', '-f', 'qcow2', '-O', 'host_device', '/tmp/a', '/dev/sda']);
    expect(limitsOf(conv)).toBe(`7200 ${2 * 1024 * 1024}`);
    // A name qemu would read as a specification never reaches it.
    expect(() => qemuImgInfoArgv('qcow2', 'json:{"driver":"file"}')).toThrow(/only given absolute paths/);
  });
});
