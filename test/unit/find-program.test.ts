// src/util/find-program.ts: the lab's one "is this program installed" lookup.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findProgram } from '../../src/util/find-program.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

describe('findProgram', () => {
  it('takes the first directory with an executable of that name, skipping non-executable files', () => {
    const root = scratch('tsbm-findprog-');
    const [a, b, c] = ['a', 'b', 'c'].map((d) => join(root, d)) as [string, string, string];
    for (const d of [a, b, c]) mkdirSync(d);
    writeFileSync(join(a, 'tool'), '#!/bin/sh\n');
    chmodSync(join(a, 'tool'), 0o644);
    writeFileSync(join(b, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(c, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    expect(findProgram('tool', [a, b, c])).toBe(join(b, 'tool'));
    expect(findProgram('missing', [a, b, c])).toBeUndefined();
  });

  it('searches PATH by default', () => {
    expect(findProgram('sh')).toMatch(/\/sh$/);
  });
});
