// Inventory data that must stay data: a host name with a newline or another control character is
// refused wherever an inventory is read (YAML file, inventory script) at its file:line:col; a
// value tagged `!unsafe` is handed to templates as the text it holds, never rendered; names that
// are Object.prototype properties are variables like any other.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { loadInventories } from '../../src/inventory/load.js';
import { inventoryVarsFor, magicVars } from '../../src/inventory/vars.js';
import { lazyVars } from '../../src/executor/lazy-vars.js';
import { renderString } from '../../src/template/index.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

function loadFails(file: string): TsbmError {
  try {
    loadInventories([file]);
  } catch (e) {
    expect(e).toBeInstanceOf(TsbmError);
    return e as TsbmError;
  }
  throw new Error('expected an error');
}

describe('host names', () => {
  it('a YAML host name with a newline is a parse error at its line and column', () => {
    const dir = scratch('tsbm-inv-');
    const f = join(dir, 'inv.yml');
    writeFileSync(f, 'all:\n  hosts:\n    ok1:\n    "n1\\nhostname evil":\n      ansible_host: 10.0.0.1\n');
    const e = loadFails(f);
    expect(e.kind).toBe('parse');
    expect(e.message).toBe('host "n1\\nhostname evil": the host name holds a control character (U+000A, a newline)');
    expect(e.pos).toMatchObject({ file: f, line: 4, col: 5 });
  });

  it('an inventory script naming a host with a carriage return is refused the same way', () => {
    const dir = scratch('tsbm-inv-');
    const f = join(dir, 'inv.sh');
    writeFileSync(f, `#!/bin/sh\nprintf '%s\\n' '{"all": {"hosts": ["good", "bad\\r"]}, "_meta": {"hostvars": {}}}'\n`);
    chmodSync(f, 0o755);
    expect(loadFails(f).message).toMatch(/host "bad\\r": the host name holds a control character \(U\+000D\)/);
  });

  it('a host name holding {{ reaches templates as the text it is', () => {
    const dir = scratch('tsbm-inv-');
    const f = join(dir, 'inv.yml');
    writeFileSync(f, 'all:\n  hosts:\n    \'n{{ env "HOME" }}\':\n');
    const inv = loadInventories([f]);
    const vars = lazyVars({ ...inventoryVarsFor(inv, 'n{{ env "HOME" }}'), ...magicVars(inv, 'n{{ env "HOME" }}') }, { baseDir: dir });
    expect(renderString('{{ inventory_hostname }}|{{ groups.all.0 }}', { vars, baseDir: dir })).toBe('n{{ env "HOME" }}|n{{ env "HOME" }}');
  });
});

describe('!unsafe values', () => {
  it('are read as the text they hold wherever they are used, and nothing they hold undoes that', () => {
    const dir = scratch('tsbm-inv-');
    const f = join(dir, 'inv.yml');
    writeFileSync(
      f,
      [
        'all:',
        '  hosts:',
        '    n1:',
        '      a: !unsafe \'x\\{{ env "HOME" }}\'',
        '      b: !unsafe "{{ file \\"/etc/hostname\\" }}"',
        '      c: "{{ a }}-{{ b }}"',
        '      driver_info:',
        '        note: !unsafe "\\\\{{{ raw }}}"',
        '',
      ].join('\n'),
    );
    const inv = loadInventories([f]);
    const vars = lazyVars(inventoryVarsFor(inv, 'n1'), { baseDir: dir });
    expect(vars.a).toBe('x\\{{ env "HOME" }}');
    expect(vars.b).toBe('{{ file "/etc/hostname" }}');
    expect(vars.c).toBe('x\\{{ env "HOME" }}-{{ file "/etc/hostname" }}');
    expect((vars.driver_info as Record<string, unknown>).note).toBe('\\{{{ raw }}}');
    expect(renderString('{{ driver_info.note }}', { vars, baseDir: dir })).toBe('\\{{{ raw }}}');
  });

  it('variables and keys named after Object.prototype properties are variables like any other', () => {
    const dir = scratch('tsbm-inv-');
    const f = join(dir, 'inv.yml');
    // A template in the mapping makes the executor render it: a copy is made key by key.
    writeFileSync(f, 'all:\n  vars:\n    driver_info: {__proto__: {x: 1}, constructor: c}\n  hosts:\n    n1:\n      driver_info: {toString: t, name: "{{ inventory_hostname }}"}\n');
    const inv = loadInventories([f]);
    const di = lazyVars({ ...inventoryVarsFor(inv, 'n1'), ...magicVars(inv, 'n1') }, { baseDir: dir }).driver_info as Record<string, unknown>;
    expect(Object.keys(di)).toEqual(['__proto__', 'constructor', 'toString', 'name']);
    expect(di.name).toBe('n1');
    expect(Object.getPrototypeOf(di)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(di, '__proto__')?.value).toEqual({ x: 1 });
  });
});
