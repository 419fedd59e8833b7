import { describe, expect, it } from 'vitest';
import { composeVars } from '../../src/executor/vars.js';
import { assignVars } from '../../src/util/merge-vars.js';

describe('assignVars', () => {
  it('merges driver_info, instance_info and properties key by key, the later layer winning', () => {
    const out = assignVars(
      { driver_info: { redfish_username: 'u', redfish_address: 'a' }, instance_info: { image_source: 'x' }, properties: { p: 1 } },
      { driver_info: { redfish_address: 'b' }, instance_info: { image_pull_secret: 's' }, properties: { q: 2 } },
    );
    expect(out).toEqual({
      driver_info: { redfish_username: 'u', redfish_address: 'b' },
      instance_info: { image_source: 'x', image_pull_secret: 's' },
      properties: { p: 1, q: 2 },
    });
  });

  it('replaces every other variable whole, as Ansible does', () => {
    expect(assignVars({ m: { a: 1 }, l: [1] }, { m: { b: 2 }, l: [2] })).toEqual({ m: { b: 2 }, l: [2] });
  });

  it('merges one level only: a nested mapping is replaced', () => {
    const out = assignVars({ instance_info: { root_device: { name: '/dev/sda' }, k: 1 } }, { instance_info: { root_device: { serial: 'S' } } });
    expect(out).toEqual({ instance_info: { root_device: { serial: 'S' }, k: 1 } });
  });

  it('replaces when either side is not a mapping (null, a template string, a list)', () => {
    expect(assignVars({ driver_info: { a: 1 } }, { driver_info: null })).toEqual({ driver_info: null });
    expect(assignVars({ driver_info: '{{ bmc }}' }, { driver_info: { a: 1 } })).toEqual({ driver_info: { a: 1 } });
    expect(assignVars({ driver_info: { a: 1 } }, { driver_info: '{{ bmc }}' })).toEqual({ driver_info: '{{ bmc }}' });
    expect(assignVars({ properties: [1] }, { properties: { a: 1 } })).toEqual({ properties: { a: 1 } });
  });

  it('never mutates either layer', () => {
    const low = { driver_info: { a: 1 } };
    const high = { driver_info: { b: 2 } };
    const out = assignVars({ ...low }, high);
    expect(low).toEqual({ driver_info: { a: 1 } });
    expect(high).toEqual({ driver_info: { b: 2 } });
    expect(out.driver_info).not.toBe(low.driver_info);
  });
});

describe('composeVars with node mappings', () => {
  it('merges through every precedence layer, lowest first', () => {
    const layer = (k: string) => ({ driver_info: { [k]: k, top: k } });
    const v = composeVars({
      roleDefaults: layer('defaults'),
      inventory: layer('inventory'),
      play: layer('play'),
      varsFiles: [layer('vars_file')],
      roleVars: layer('role_vars'),
      blocks: [layer('block')],
      task: layer('task'),
      facts: layer('facts'),
      extra: layer('extra'),
      magic: {},
    });
    expect(v.driver_info).toEqual({
      defaults: 'defaults',
      inventory: 'inventory',
      play: 'play',
      vars_file: 'vars_file',
      role_vars: 'role_vars',
      block: 'block',
      task: 'task',
      facts: 'facts',
      extra: 'extra',
      top: 'extra',
    });
  });
});
