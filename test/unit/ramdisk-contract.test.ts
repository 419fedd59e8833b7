import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEPLOYS, type Deploy } from '../../src/module-api/arg-names.js';
import {
  type Need,
  allNeeds,
  contractFailure,
  contractProbeArgv,
  degradedNote,
  judgeContract,
  needsFor,
} from '../../src/modules/ramdisk/ramdisk-contract.js';

const names = (needs: Need[]) => needs.flatMap((n) => n.anyOf);
const withConfigDrive = { instance_info: { configdrive: { meta_data: { hostname: 'n' } } } };

describe('the ramdisk contract', () => {
  it('one line names every missing program, what uses it, and the deploy', () => {
    const needs = needsFor('bootc', withConfigDrive);
    const v = judgeContract(needs, 'lsblk\nsfdisk\nskopeo\ngetenforce\n', 'podman version 4.3.1');
    const line = contractFailure('bootc', v);
    expect(line).toBe(
      'the ramdisk cannot do a bootc deploy: missing lsblk (root_device), sfdisk (configdrive_write, with instance_info.configdrive)',
    );
    expect(line).not.toContain('\n');
    expect(degradedNote(v)).toMatch(
      /optional skopeo \(no reading the image size .*\), getenforce \(no SELinux detection/,
    );
  });

  it("with a pull secret, the programs that make and check the secret's directory are required (ls: empty before the secret is written)", () => {
    const names = (v: Record<string, unknown>) => needsFor('bootc', v).flatMap((n) => n.anyOf);
    const withSecret = names({ instance_info: { image_pull_secret: 'dXNlcjpwdw==' } });
    for (const p of ['stat', 'id', 'dirname', 'rmdir', 'ls']) expect(withSecret).toContain(p);
    expect(names({})).not.toContain('ls');
  });

  it('alternatives: any one present satisfies the need; all absent names them together', () => {
    const needs = needsFor('bootc', {});
    const some = judgeContract(needs, 'sha256sum\nopenssl\nshasum\n', 'podman version 5.2.2');
    expect(some.degraded.map((n) => n.anyOf[0])).not.toContain('sha256sum');
    const none = judgeContract(needs, 'sha256sum\nopenssl\nshasum\nmd5sum\n', 'podman version 5.2.2');
    expect(degradedNote(none)).toContain('one of sha256sum/openssl/shasum/md5sum (no a hash check');
    expect(contractFailure('bootc', none)).toBeUndefined();
  });

  it('podman older than 4.0, or a version it cannot read, fails the bootc deploy', () => {
    const needs = needsFor('bootc', {});
    expect(contractFailure('bootc', judgeContract(needs, '', 'podman version 3.4.4'))).toBe(
      'the ramdisk cannot do a bootc deploy: podman 3.4.4 is older than 4.0',
    );
    expect(contractFailure('bootc', judgeContract(needs, '', 'garbage'))).toMatch(
      /podman unknown \(garbage\) is older/,
    );
    expect(contractFailure('bootc', judgeContract(needs, '', 'podman version 4.0.0'))).toBeUndefined();
    // No podman at all: the missing program is the message, not its version.
    expect(contractFailure('bootc', judgeContract(needs, 'podman\n', undefined))).toBe(
      'the ramdisk cannot do a bootc deploy: missing podman (podman_pull, bootc_install)',
    );
  });

  it("needs follow the node's data: config drive, qcow2, the hash algorithm, by_path hints", () => {
    expect(names(needsFor('bootc', {}))).not.toContain('sfdisk');
    expect(names(needsFor('bootc', withConfigDrive))).toEqual(
      expect.arrayContaining(['sfdisk', 'dd', 'blockdev']),
    );
    expect(names(needsFor('image', {}))).toContain('sha256sum');
    expect(names(needsFor('image', {}))).not.toContain('qemu-img');
    const qcow = { instance_info: { image_disk_format: 'qcow2', image_os_hash_algo: 'sha512' } };
    expect(names(needsFor('image', qcow))).toEqual(expect.arrayContaining(['qemu-img', 'sha512sum']));
    expect(names(needsFor('image', qcow))).not.toContain('sha256sum');
    expect(names(needsFor('bootc', {}))).not.toContain('find');
    expect(
      names(needsFor('bootc', { properties: { root_device: { by_path: '/dev/disk/by-path/x' } } })),
    ).toContain('find');
    expect(names(needsFor('ramdisk', {}))).toEqual(['sh', 'cat', 'ip']);
  });

  it("undeploy (undeploy.yml's erase) needs the erase's programs, not podman or the bootc deploy's", () => {
    const needs = needsFor('undeploy', withConfigDrive);
    expect(names(needs)).toEqual(['sh', 'cat', 'ip', 'lsblk', 'blockdev', 'partx', 'dd', 'cmp', 'wipefs']);
    expect(contractFailure('undeploy', judgeContract(needs, 'podman\nsfdisk\nwipefs\n', undefined))).toBeUndefined();
    expect(contractFailure('undeploy', judgeContract(needs, 'cmp\npartx\n', undefined))).toBe(
      "the ramdisk cannot do an undeploy (erase): missing partx (erase_disk_metadata (the disk's partitions)), cmp (erase_disk_metadata (reads the erased bytes back))",
    );
  });

  it('the probe prints exactly the programs the shell cannot find', () => {
    const argv = contractProbeArgv([
      { anyOf: ['sh'], usedBy: 'x' },
      { anyOf: ['tsbm-no-such-program-1', 'cat'], usedBy: 'x' },
      { anyOf: ['tsbm-no-such-program-2'], usedBy: 'x' },
    ]);
    const out = execFileSync(argv[0] as string, argv.slice(1), { encoding: 'utf8' });
    expect(out).toBe('tsbm-no-such-program-1\ntsbm-no-such-program-2\n');
  });
});

describe('docs/ramdisk.md matches the contract', () => {
  const doc = readFileSync('docs/ramdisk.md', 'utf8');
  const section = (d: Deploy) => {
    const start = doc.indexOf(`(\`deploy: ${d}\`)`);
    expect(start, d).toBeGreaterThan(0);
    const end = doc.indexOf('\n## ', start);
    return doc.slice(start, end < 0 ? undefined : end);
  };
  /** Table rows: the programs of the first cell and the last cell. */
  const rows = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => {
        const cells = l.split('|').map((c) => c.trim());
        return {
          programs: [...(cells[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string),
          needed: cells.at(-2) ?? '',
        };
      });
  const everything = {
    ...withConfigDrive,
    instance_info: { ...withConfigDrive.instance_info, image_disk_format: 'qcow2' },
    properties: { root_device: { by_path: 'x' } },
  };

  for (const d of DEPLOYS) {
    it(`${d}: every program is in its table, marked required, optional or conditional as in the code`, () => {
      const table = rows(section(d));
      const algos = d === 'image' ? ['sha256', 'sha512', 'md5'] : ['sha256'];
      for (const algo of algos) {
        const vars = {
          ...everything,
          instance_info: { ...everything.instance_info, image_os_hash_algo: algo },
        };
        for (const need of allNeeds(d, vars)) {
          for (const p of need.anyOf) {
            const row = table.find((r) => r.programs.includes(p));
            expect(row, `${d}: ${p} has no row`).toBeDefined();
            const want = need.optional ? /^optional/ : need.when ? /^with / : /^required/;
            // The image hash row names the algorithm's program: required for whichever is chosen.
            expect(row?.needed, `${d}: ${p}`).toMatch(want);
          }
        }
      }
      // And nothing in the table that the code does not check.
      const known = new Set(
        ['sha256', 'sha512', 'md5'].flatMap((algo) =>
          allNeeds(d, {
            ...everything,
            instance_info: { ...everything.instance_info, image_os_hash_algo: algo },
          }).flatMap((n) => n.anyOf),
        ),
      );
      for (const r of table)
        for (const p of r.programs)
          expect(known.has(p), `${d}: ${p} is documented but not checked`).toBe(true);
    });
  }
});
