// `npm run lint` runs dependency-cruiser with .dependency-cruiser.cjs over src/: imports point
// only down the layers and there are no cycles. Here the same command runs over small trees
// made for the purpose: one that respects the layers passes; planting an upward import, a cycle,
// a directory no layer owns or an import between two capability folders makes it fail, naming the rule.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

/** A tree of .ts files (path -> text) with the project's tsconfig settings, linted as `npm run lint` does. */
function lint(files: Record<string, string>): { code: number | null; out: string } {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-layers-'));
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }),
    ...files,
  };
  for (const [p, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  const r = spawnSync(process.execPath, [DEPCRUISE, 'src', '--config', CONFIG, '--output-type', 'err'], { cwd: dir, encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

const base = {
  'src/util/wait.ts': 'export const wait = 1;\n',
  'src/connection/ssh.ts': "import { wait } from '../util/wait.js';\nexport const ssh = wait;\n",
  'src/modules/command.ts': "import { ssh } from '../connection/ssh.js';\nexport const command = ssh;\n",
  'src/cli/run.ts': "import { command } from '../modules/command.js';\nexport const run = command;\n",
};

describe('layer rules (dependency-cruiser in npm run lint)', () => {
  it('pass a tree whose imports point down', () => {
    const r = lint(base);
    expect(r.out).toContain('no dependency violations');
    expect(r.code).toBe(0);
  });

  it('fail on an upward import (also type-only), a cycle and a directory no layer owns', () => {
    const r = lint({
      ...base,
      'src/connection/ssh.ts': "import { run } from '../cli/run.js';\nexport const ssh = run;\n",
      'src/util/wait.ts': "import type { command } from '../modules/command.js';\nexport const wait: typeof command = 1;\n",
      'src/modules/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'src/modules/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      'src/misc/x.ts': "import { wait } from '../util/wait.js';\nexport const x = wait;\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/layer-io-imports-up: src\/connection\/ssh\.ts → src\/cli\/run\.ts/);
    expect(r.out).toMatch(/layer-util-imports-up: src\/util\/wait\.ts → src\/modules\/command\.ts/);
    expect(r.out).toMatch(/no-cycles: src\/modules\/(a|b)\.ts/);
    expect(r.out).toMatch(/no-unknown-layer: src\/misc\/x\.ts/);
  });

  it('fail when one capability folder imports another, pass for module-api and the preflight', () => {
    const caps = {
      ...base,
      'src/module-api/disk.ts': "import { wait } from '../util/wait.js';\nexport const disk = wait;\n",
      'src/modules/bootc/bootc_install.ts': "import { disk } from '../../module-api/disk.js';\nexport const install = disk;\n",
      'src/modules/preflight/deploy_preflight.ts': "import { install } from '../bootc/bootc_install.js';\nexport const pre = install;\n",
    };
    expect(lint(caps).code).toBe(0);
    const r = lint({ ...caps, 'src/modules/image/image_write.ts': "import { install } from '../bootc/bootc_install.js';\nexport const write = install;\n" });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/capability-imports-capability: src\/modules\/image\/image_write\.ts → src\/modules\/bootc\/bootc_install\.ts/);
  });
});
