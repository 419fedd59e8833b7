// The project config file (tsbm.cfg) and TSBM_* variables: found as Ansible finds ansible.cfg,
// read as configparser reads it, typed by the settings table, with Ansible's precedence.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findConfigFile } from '../../src/config/find.js';
import { parseIniConfig } from '../../src/config/ini-file.js';
import { CONFIG_OPTIONS } from '../../src/config/options.js';
import { describeSource, loadSettings } from '../../src/config/settings.js';
import { TsbmError } from '../../src/errors.js';
import { scratchDirs } from '../helpers/scratch.js';
import { thrownBy } from '../helpers/thrown.js';

const scratch = scratchDirs();

function place() {
  const base = scratch('tsbm-config-');
  const cwd = join(base, 'project');
  const home = join(base, 'home');
  mkdirSync(cwd, { mode: 0o755 });
  mkdirSync(home, { mode: 0o755 });
  chmodSync(cwd, 0o755);
  return { base, cwd, home };
}

describe('finding tsbm.cfg', () => {
  it('takes TSBM_CONFIG, then ./tsbm.cfg, then ~/.tsbm.cfg, the first only', () => {
    const { base, cwd, home } = place();
    expect(findConfigFile({ env: {}, cwd, home }).file).toBeUndefined();
    writeFileSync(join(home, '.tsbm.cfg'), '[defaults]\n');
    expect(findConfigFile({ env: {}, cwd, home }).file).toBe(join(home, '.tsbm.cfg'));
    writeFileSync(join(cwd, 'tsbm.cfg'), '[defaults]\n');
    expect(findConfigFile({ env: {}, cwd, home }).file).toBe(join(cwd, 'tsbm.cfg'));
    const named = join(base, 'ci.cfg');
    writeFileSync(named, '[defaults]\n');
    expect(findConfigFile({ env: { TSBM_CONFIG: named }, cwd, home }).file).toBe(named);
    // a directory holding tsbm.cfg, as ANSIBLE_CONFIG may name one
    expect(findConfigFile({ env: { TSBM_CONFIG: cwd }, cwd: base, home }).file).toBe(join(cwd, 'tsbm.cfg'));
  });

  it('refuses a TSBM_CONFIG that names nothing', () => {
    const { cwd, home } = place();
    expect(() => findConfigFile({ env: { TSBM_CONFIG: 'nope.cfg' }, cwd, home })).toThrow(/TSBM_CONFIG names nope.cfg, which is not there/);
  });

  it('passes over ./tsbm.cfg in a world-writable directory, with a warning', () => {
    const { cwd, home } = place();
    writeFileSync(join(cwd, 'tsbm.cfg'), '[defaults]\n');
    chmodSync(cwd, 0o777);
    const found = findConfigFile({ env: {}, cwd, home });
    expect(found.file).toBeUndefined();
    expect(found.warnings.join('\n')).toMatch(/is not read: .* is writable by everyone/);
  });
});

describe('reading it as configparser does', () => {
  it('sections, = and :, comments, keys in any case, continuation lines', () => {
    const s = parseIniConfig(
      '# a comment\n; another\n[defaults]\nForks = 7 ; inline comment\ninventory: a.yml,b.yml\nroles_path = r1\n  r2\n',
      'f.cfg',
    );
    const d = s.get('defaults')!;
    expect(d.get('forks')).toEqual({ value: '7', pos: { file: 'f.cfg', line: 4, col: 9 } });
    expect(d.get('inventory')?.value).toBe('a.yml,b.yml');
    expect(d.get('roles_path')?.value).toBe('r1\nr2');
  });

  it('a key twice in a section, a key before any section, a line that is no setting: errors at file:line', () => {
    expect(() => parseIniConfig('[defaults]\nforks = 1\nforks = 2\n', 'f.cfg')).toThrow(/"forks" is set twice in one section \(first on line 2\)/);
    expect(() => parseIniConfig('forks = 1\n', 'f.cfg')).toThrow(/comes before any \[section\]/);
    const e = thrownBy(() => parseIniConfig('[defaults]\njust words\n', 'f.cfg'));
    expect((e as TsbmError).oneLine()).toMatch(/^f\.cfg:2:1: cannot read line 2/);
  });
});

describe('settings', () => {
  it('types values, resolves relative paths against the file, and keeps the source', () => {
    const { cwd, home } = place();
    writeFileSync(
      join(cwd, 'tsbm.cfg'),
      '[defaults]\ninventory = inv/a.yml, /srv/b.yml\nforks = 12\nroles_path = roles:/opt/roles\nask_vault_pass = yes\nvault_identity_list = dev@dev.pass, prod@prompt\n',
    );
    const s = loadSettings({ env: {}, cwd, home });
    expect(s.file).toBe(join(cwd, 'tsbm.cfg'));
    expect(s.get('inventory')).toEqual([join(cwd, 'inv/a.yml'), '/srv/b.yml']);
    expect(s.get('forks')).toBe(12);
    expect(s.get('roles_path')).toEqual([join(cwd, 'roles'), '/opt/roles']);
    expect(s.get('ask_vault_pass')).toBe(true);
    expect(s.get('vault_identity_list')).toEqual(['dev@dev.pass', 'prod@prompt']);
    expect(s.get('vault_password_file')).toBeUndefined();
    expect(describeSource(s.source('forks'))).toBe(`${join(cwd, 'tsbm.cfg')}:3`);
    expect(s.get('journal_dir')).toBe('.tsbm/runs');
    expect(describeSource(s.source('journal_dir'))).toBe('default');
  });

  it('an environment variable wins over the file (relative to the working directory)', () => {
    const { cwd, home } = place();
    writeFileSync(join(cwd, 'tsbm.cfg'), '[defaults]\nforks = 12\ninventory = a.yml\n');
    const s = loadSettings({ env: { TSBM_FORKS: '3', TSBM_INVENTORY: 'x.yml,y.yml' }, cwd: '/tmp', home });
    expect(s.get('forks')).toBe(3);
    expect(describeSource(s.source('forks'))).toBe('environment TSBM_FORKS');
    expect(s.get('inventory')).toEqual(['/tmp/x.yml', '/tmp/y.yml']);
    expect(s.fromFile('inventory')).toBeUndefined();
  });

  it('a bad value is an options error naming where it was set', () => {
    const { cwd, home } = place();
    writeFileSync(join(cwd, 'tsbm.cfg'), '[defaults]\nforks = many\n');
    const e = thrownBy(() => loadSettings({ env: {}, cwd, home }));
    expect(e).toBeInstanceOf(TsbmError);
    expect((e as TsbmError).exitCode).toBe(5);
    expect((e as TsbmError).oneLine()).toMatch(/tsbm\.cfg:2:9: forks must be a whole number of at least 1, got "many"/);
    expect(() => loadSettings({ env: { TSBM_ASK_VAULT_PASS: 'perhaps' }, cwd: '/', home })).toThrow(/TSBM_ASK_VAULT_PASS must be true or false/);
  });

  it('an unknown key or section is an error with the nearest name, never ignored', () => {
    const { cwd, home } = place();
    writeFileSync(join(cwd, 'tsbm.cfg'), '[defaults]\nforkz = 2\n');
    expect(() => loadSettings({ env: {}, cwd, home })).toThrow(/unknown setting "forkz" in \[defaults\]/);
    const e = thrownBy(() => loadSettings({ env: {}, cwd, home }));
    expect((e as TsbmError).hint).toBe('did you mean "forks"?');
    writeFileSync(join(cwd, 'tsbm.cfg'), '[default]\nforks = 2\n');
    expect(() => loadSettings({ env: {}, cwd, home })).toThrow(/unknown section \[default\]/);
  });

  it('every table entry is complete: a TSBM_ variable, a description, a known type', () => {
    for (const [name, o] of Object.entries(CONFIG_OPTIONS)) {
      expect(o.env, name).toMatch(/^TSBM_[A-Z_]+$/);
      expect(o.description.length, name).toBeGreaterThan(10);
      expect(['string', 'path', 'pathlist', 'pathspec', 'list', 'int', 'bool']).toContain(o.type);
    }
  });
});
