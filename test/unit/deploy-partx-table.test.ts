// `partx -P` output to partitions in bytes: GPT names with partx's \xHH escapes, MBR, and
// anything partx would not print (the callers then ask sfdisk instead).
import { execFileSync } from 'node:child_process';
import { existsSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PARTX_UNIT_BYTES, parsePartxPairs, partxArgv } from '../../src/module-api/partx-table.js';
import { scratchDirs } from '../helpers/scratch.js';

const tool = (name: string) =>
  ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].map((d) => `${d}/${name}`).find(existsSync);
const PARTX = tool('partx');
const SGDISK = tool('sgdisk');

describe('parsePartxPairs', () => {
  it('GPT with names: numbers, byte offsets and sizes, names with spaces', () => {
    // util-linux 2.38 `partx -P -o NR,START,SECTORS,NAME,SCHEME` after bootc and configdrive_write
    const out = [
      'NR="1" START="2048" SECTORS="1048576" NAME="EFI-SYSTEM" SCHEME="gpt"',
      'NR="2" START="1050624" SECTORS="15204352" NAME="root fs" SCHEME="gpt"',
      'NR="3" START="16640000" SECTORS="131072" NAME="config-2" SCHEME="gpt"',
      '',
    ].join('\n');
    expect(parsePartxPairs(out)).toEqual({
      scheme: 'gpt',
      partitions: [
        { number: 1, offsetBytes: 2048 * 512, sizeBytes: 1048576 * 512, name: 'EFI-SYSTEM' },
        { number: 2, offsetBytes: 1050624 * 512, sizeBytes: 15204352 * 512, name: 'root fs' },
        { number: 3, offsetBytes: 16640000 * 512, sizeBytes: 131072 * 512, name: 'config-2' },
      ],
    });
  });
  it('MBR (dos): no names; logical partitions keep their numbers', () => {
    const out =
      'NR="1" START="2048" SECTORS="409600" NAME="" SCHEME="dos"\nNR="5" START="413696" SECTORS="2048" NAME="" SCHEME="dos"\n';
    expect(parsePartxPairs(out)).toEqual({
      scheme: 'dos',
      partitions: [
        { number: 1, offsetBytes: 2048 * 512, sizeBytes: 409600 * 512 },
        { number: 5, offsetBytes: 413696 * 512, sizeBytes: 2048 * 512 },
      ],
    });
  });
  it('START and SECTORS are 512-byte units even on a 4Kn disk (partition at 4096-byte sector 256)', () => {
    expect(PARTX_UNIT_BYTES).toBe(512);
    const t = parsePartxPairs('NR="1" START="2048" SECTORS="20480" NAME="a b" SCHEME="gpt"\n');
    expect(t?.partitions[0]).toMatchObject({ offsetBytes: 256 * 4096, sizeBytes: 2560 * 4096 });
  });
  it('decodes \\xHH escapes: quotes, backslash, $, `, tab, UTF-8 bytes, pairs inside a name', () => {
    const out = [
      'NR="1" START="2048" SECTORS="2048" NAME="a\\x24b\\x60c d" SCHEME="gpt"',
      'NR="2" START="4096" SECTORS="2048" NAME="tab\\x09x" SCHEME="gpt"',
      'NR="3" START="6144" SECTORS="2048" NAME="\\xc3\\xbcn\\xc3\\xaf" SCHEME="gpt"',
      'NR="4" START="8192" SECTORS="2048" NAME="q\'x=\\x22y\\x22 Z=\\x221\\x22" SCHEME="gpt"',
      'NR="5" START="10240" SECTORS="2048" NAME="we\\x22ird\\x5cname" SCHEME="gpt"',
      'NR="6" START="12288" SECTORS="2048" NAME="ünï raw" SCHEME="gpt"',
    ].join('\n');
    expect(parsePartxPairs(out)?.partitions.map((p) => p.name)).toEqual([
      'a$b`c d',
      'tab\tx',
      'ünï',
      'q\'x="y" Z="1"',
      'we"ird\\name',
      'ünï raw',
    ]);
  });
  it('columns in any order, extra columns ignored', () => {
    expect(parsePartxPairs('SCHEME="gpt" UUID="x" START="34" NR="7" SECTORS="1"')?.partitions).toEqual([
      { number: 7, offsetBytes: 34 * 512, sizeBytes: 512 },
    ]);
  });
  it('nothing parseable is undefined: empty output (a table without partitions), errors, garbage', () => {
    for (const text of [
      '',
      '\n\n',
      'partx: /dev/vda: failed to read partition table\n',
      '{"partitiontable":{"label":"gpt","partitions":[]}}',
      'NR START SECTORS NAME SCHEME\n 1 2048 4096 EFI gpt\n',
      'NR="1" START="2048" SECTORS="4096" NAME="unterminated SCHEME="gpt"',
      'NR="1" START="2048" SECTORS="4096" SCHEME="gpt" trailing',
      'NR="x" START="2048" SECTORS="4096" SCHEME="gpt"',
      'NR="0" START="2048" SECTORS="4096" SCHEME="gpt"',
      'NR="1" START="-1" SECTORS="4096" SCHEME="gpt"',
      'NR="1" START="2048" SECTORS="4096"',
      'NR="1" SECTORS="4096" SCHEME="gpt"',
      'NR="1" START="99999999999999999999" SECTORS="1" SCHEME="gpt"',
    ]) {
      expect(parsePartxPairs(text), JSON.stringify(text)).toBeUndefined();
    }
  });
  it('one bad line spoils the whole output: a partial table could hide the partition looked for', () => {
    const out = 'NR="1" START="2048" SECTORS="4096" NAME="" SCHEME="gpt"\npartx: warning\n';
    expect(parsePartxPairs(out)).toBeUndefined();
  });
});

describe('partxArgv', () => {
  it('pairs mode with the parsed columns (no --show: it conflicts with -P)', () => {
    expect(partxArgv('/dev/vda')).toEqual(['partx', '-P', '-o', 'NR,START,SECTORS,NAME,SCHEME', '/dev/vda']);
  });
  const scratch = scratchDirs();
  it.skipIf(!PARTX || !SGDISK)('real partx reads a GPT sgdisk wrote (skipped: no partx or sgdisk)', () => {
    const disk = join(scratch('tsbm-partx-'), 'disk.img');
    writeFileSync(disk, '');
    truncateSync(disk, 64 * 1024 * 1024);
    const sg = ['-n', '1:2048:+10M', '-c', '1:EFI System', '-n', '2:0:+20M', '-c', '2:we"ird\\na$me'];
    execFileSync(SGDISK as string, [...sg, '-n', '3:0:+5M', '-c', '3:config-2', disk], { stdio: 'ignore' });
    const [cmd, ...rest] = partxArgv(disk);
    expect(cmd).toBe('partx');
    const out = execFileSync(PARTX as string, rest, { encoding: 'utf8' });
    expect(parsePartxPairs(out)).toEqual({
      scheme: 'gpt',
      partitions: [
        { number: 1, offsetBytes: 2048 * 512, sizeBytes: 10 * 1024 * 1024, name: 'EFI System' },
        { number: 2, offsetBytes: 22528 * 512, sizeBytes: 20 * 1024 * 1024, name: 'we"ird\\na$me' },
        { number: 3, offsetBytes: 63488 * 512, sizeBytes: 5 * 1024 * 1024, name: 'config-2' },
      ],
    });
  });
});
