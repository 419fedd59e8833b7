// tsbm as users install it: the `npm pack` tarball, installed with `npm install -g` into a
// temporary prefix, run from a directory that has nothing to do with the checkout. The
// tarball must hold everything a run needs (compiled code, precompiled validators, schemas,
// playbooks, example inventories, the report's page assets, and the lab package bundled inside:
// its code, vendor trees, ramdisk tools and spawner source) and nothing of the tests.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tsbm-pack-'));
const prefix = join(dir, 'prefix');
const pkg = join(prefix, 'lib', 'node_modules', 'tsbm');
const tsbm = join(prefix, 'bin', 'tsbm');
const npmEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
let files: string[] = [];
let tarball = '';

afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/cli/main.js'))) throw new Error('run `npm run build` first');
  // The build already ran (npm test builds); --ignore-scripts packs that build as it is.
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, env: npmEnv, maxBuffer: 64 << 20 });
  const info = JSON.parse(packed.stdout) as { filename: string }[];
  tarball = join(dir, info[0]!.filename);
  // The tarball's own listing: npm's --json list masks path segments that look like tokens (a
  // mockup's UUID-named System shows as ***).
  files = (await run('tar', ['-tzf', tarball], { maxBuffer: 64 << 20 })).stdout.split('\n').filter((f) => f && !f.endsWith('/')).map((f) => f.replace(/^package\//, ''));
  // Dependencies come from the npm cache when it has them, else from the registry.
  await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', tarball], { cwd: dir, env: npmEnv, maxBuffer: 64 << 20, timeout: 300_000 });
}, 360_000);

/** Files git tracks under a directory of the checkout. */
function tracked(path: string): string[] {
  return spawnSync('git', ['ls-files', path], { cwd: ROOT, encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean);
}

describe('the npm pack tarball, installed globally', () => {
  it('ships what a run needs and none of the tests', () => {
    const has = new Set(files);
    for (const f of ['bin/tsbm.js', 'package.json', 'README.md', 'dist/cli/main.js', 'schemas/playbook.json', 'schemas/inventory.json', 'schemas/events.json'])
      expect(has, f).toContain(f);
    // every compiled module, and the validators precompiled at build time
    const ts = tracked('src').filter((f) => f.endsWith('.ts'));
    for (const f of ts) expect(has, f).toContain(f.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js'));
    expect(files.filter((f) => f.startsWith('dist/validators/')).length).toBeGreaterThan(10);
    // data read at run time from the package: every tracked file of these
    for (const d of ['playbooks', 'inventory-examples', 'schemas', 'src/report/client'])
      for (const f of tracked(d)) expect(has, f).toContain(f);
    // the simulated lab, a package of its own, ships inside tsbm's: its code, vendor trees,
    // ramdisk tools and spawner source, and none of its TypeScript sources
    const lab = 'node_modules/@tsbm/lab/';
    for (const f of tracked('packages/lab/src').filter((p) => p.endsWith('.ts')))
      expect(has, f).toContain(f.replace(/^packages\/lab\/src\//, `${lab}dist/`).replace(/\.ts$/, '.js'));
    for (const d of ['packages/lab/mockups', 'packages/lab/ramdisk', 'packages/lab/package.json', 'packages/lab/src/ssh/spawner.c'])
      for (const f of tracked(d)) expect(has, f).toContain(f.replace(/^packages\/lab\//, lab));
    expect(files.filter((f) => f.startsWith(lab) && f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('node_modules/') && !f.startsWith(lab)), 'only the lab is bundled').toEqual([]);
    expect(files.filter((f) => /^(test|bench|\.ci)\//.test(f) || f.endsWith('.test.js'))).toEqual([]);
  });

  it('`tsbm run <shipped deploy playbook> -i <shipped sim inventory>` from an unrelated directory deploys, and reports', async () => {
    const elsewhere = mkdtempSync(join(dir, 'elsewhere-'));
    const r = await run(tsbm, ['run', join(pkg, 'playbooks/deploy-bootc.yml'), '-i', join(pkg, 'inventory-examples/sim.yml'), '--output', 'plain', '--report', 'report.html'], {
      cwd: elsewhere,
      env: { ...process.env, NO_COLOR: '1' },
      maxBuffer: 64 << 20,
      timeout: 240_000,
    }).then(
      (x) => ({ code: 0, out: x.stdout + x.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(r.code, r.out.slice(-3000)).toBe(0);
    const recap = r.out.slice(r.out.lastIndexOf('PLAY RECAP')).split('\n').filter((l) => /^node\d+\s*:/.test(l));
    expect(recap).toHaveLength(3);
    for (const l of recap) expect(l).toMatch(/changed=9 .*failed=0 /);
    // state stays where tsbm ran, not in the package
    expect(readdirSync(join(elsewhere, '.tsbm')).sort()).toEqual(expect.arrayContaining(['runs', 'sim-auto']));
    expect(existsSync(join(pkg, '.tsbm'))).toBe(false);
    const html = readFileSync(join(elsewhere, 'report.html'), 'utf8');
    expect(html).toMatch(/<script type="application\/json" id="tsbm-report-data">/);
    expect(html).toContain('timeline.js');
  }, 300_000);

  it('a playbook of one\'s own, anywhere, uses the installed package\'s shipped roles by name', () => {
    const own = mkdtempSync(join(dir, 'own-repo-'));
    writeFileSync(
      join(own, 'site.yml'),
      '- hosts: all\n  gather_facts: false\n  roles: [power-off]\n  tasks:\n    - import_role: {name: deploy}\n',
    );
    const list = spawnSync(tsbm, ['run', 'site.yml', '-i', join(pkg, 'inventory-examples/lab.yml'), '--list-tasks'], { cwd: own, encoding: 'utf8' });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/Power the node off\tTAGS: \[power\][\s\S]*Pull the image\tTAGS: \[deploy\]/);
  });

  it('`tsbm init DIR` copies the playbooks and example inventories; they load from there', () => {
    const elsewhere = mkdtempSync(join(dir, 'init-'));
    const init = spawnSync(tsbm, ['init', 'deploys'], { cwd: elsewhere, encoding: 'utf8' });
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/^copied \d+ files into .*deploys: playbooks\/ and inventory-examples\/\n/);
    expect(init.stdout).toContain('tsbm run deploys/playbooks/deploy-bootc.yml -i deploys/inventory-examples/sim.yml');
    const list = spawnSync(tsbm, ['run', 'deploys/playbooks/deploy-bootc.yml', '-i', 'deploys/inventory-examples/lab.yml', '--list-tasks'], { cwd: elsewhere, encoding: 'utf8' });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain('Install the image to the root disk');
    const again = spawnSync(tsbm, ['init', 'deploys'], { cwd: elsewhere, encoding: 'utf8' });
    expect(again.status).toBe(5);
    expect(again.stderr).toMatch(/file\(s\) exist already: .* \(add --force to replace them/);
  });
});
