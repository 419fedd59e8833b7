import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../../src/output/color.js';
import { diffLines } from '../../src/output/diff-lines.js';
import { formatBytes, formatDuration, formatItem, formatProgress, oneLine, sanitize } from '../../src/output/format.js';
import { recapLines } from '../../src/output/recap.js';

describe('output formatting', () => {
  it('formats durations stably', () => {
    expect(formatDuration(0)).toBe('0.0s');
    expect(formatDuration(449)).toBe('0.4s');
    expect(formatDuration(59_999)).toBe('59.9s');
    expect(formatDuration(62_000)).toBe('1m02s');
    expect(formatDuration(3_723_000)).toBe('1h02m03s');
    expect(formatDuration(-5)).toBe('0.0s');
  });

  it('formats sizes, items, one-liners', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatItem(undefined)).toBe('');
    expect(formatItem('x')).toBe(' (item=x)');
    expect(formatItem({ a: [1] })).toBe(' (item={"a":[1]})');
    expect(oneLine('a\n  b\tc')).toBe('a b c');
    expect(oneLine('x'.repeat(10), 5)).toBe('xxxx…');
  });

  it('shows progress with percentage and a linear ETA only when it can', () => {
    expect(formatProgress({ message: 'pull', current: 50, total: 200, unit: 'bytes', elapsedMs: 10_000 })).toBe(
      'pull · 50 B/200 B 25% ETA 30.0s · 10.0s',
    );
    expect(formatProgress({ message: 'wait', elapsedMs: 61_000 })).toBe('wait · 1m01s');
    expect(formatProgress({ message: 'n', current: 3, unit: 'disks' })).toBe('n · 3 disks');
  });

  it('recap lists every counter per host, sorted, aligned, with the wall time', () => {
    const zero = { ok: 0, changed: 0, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0 };
    const lines = recapLines({ b: { ...zero, rescued: 2, ignored: 1 }, 'long-name': { ...zero, unreachable: 1 } }, 90_500);
    expect(lines).toEqual([
      'PLAY RECAP',
      'b         : ok=0    changed=0    unreachable=0    failed=0    skipped=0    rescued=2    ignored=1',
      'long-name : ok=0    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0',
      'Wall time: 1m30s',
    ]);
  });

  it('diffs lines', () => {
    expect(diffLines('a\nb', 'a\nb\nc', 'f').slice(2)).toEqual([' a', ' b', '+c']);
    expect(diffLines('x', 'y').slice(2)).toEqual(['-x', '+y']);
  });

  it('strips ANSI codes', () => {
    expect(stripAnsi('\x1b[31mred\x1b[0m \x1b[2F\x1b[J\x1b[?25l')).toBe('red ');
  });
});

describe('sanitize', () => {
  it('removes ANSI/OSC sequences and replaces other controls, keeping tabs and newlines', () => {
    expect(sanitize('\x1b[1;31mred\x1b[0m')).toBe('red');
    expect(sanitize('a\x1b]0;title\x07b')).toBe('ab');
    expect(sanitize('a\tb\r\nc\rd\x00e\x7f')).toBe('a\tb\nc\uFFFDd\uFFFDe\uFFFD');
  });
});
