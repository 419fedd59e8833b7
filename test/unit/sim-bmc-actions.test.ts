// The fake BMC finds a POST's action through an index of every action target in its tree,
// built once per tree: it must find what a walk of the tree in order finds, in every mockup.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findAction, type Json, loadTree, normPath } from '../../packages/lab/src/bmc/state.js';
import { MOCKUPS } from '../integration/redfish-helpers.js';

/** Every action target in tree order, the first resource naming a target winning. */
function walk(tree: Map<string, Json>): Map<string, { resource: string; name: string }> {
  const out = new Map<string, { resource: string; name: string }>();
  for (const [resource, body] of tree) {
    const blocks: unknown[] = [];
    const actions = body.Actions as Json | undefined;
    if (actions) blocks.push(actions, actions.Oem);
    for (const vendor of Object.values((body.Oem as Json | undefined) ?? {})) blocks.push((vendor as Json | undefined)?.Actions);
    for (const block of blocks) {
      for (const [name, def] of Object.entries((block as Json | undefined) ?? {})) {
        const target = (def as Json | undefined)?.target;
        if (name.startsWith('#') && typeof target === 'string' && !out.has(normPath(target))) out.set(normPath(target), { resource, name });
      }
    }
  }
  return out;
}

describe('findAction', () => {
  for (const mockup of readdirSync(MOCKUPS).filter((d) => !/\.|LICENSES/.test(d))) {
    it(`${mockup}: finds every action a walk of the tree finds, with or without a trailing slash`, async () => {
      const tree = await loadTree(join(MOCKUPS, mockup));
      const expected = walk(tree);
      expect(expected.size).toBeGreaterThan(0);
      for (const [target, ref] of expected) {
        expect(findAction(tree, target)).toMatchObject(ref);
        expect(findAction(tree, `${target}/`)).toMatchObject(ref);
      }
      expect(findAction(tree, '/redfish/v1/Systems/none/Actions/ComputerSystem.Reset')).toBeUndefined();
    });
  }

  it('an action on a resource added after the first lookup is found too', async () => {
    const tree = await loadTree(join(MOCKUPS, 'dmtf-public-rackmount1'));
    expect(findAction(tree, '/redfish/v1/Extra/Actions/Extra.Go')).toBeUndefined();
    const def = { target: '/redfish/v1/Extra/Actions/Extra.Go' };
    tree.set('/redfish/v1/Extra', { Actions: { '#Extra.Go': def } });
    expect(findAction(tree, '/redfish/v1/Extra/Actions/Extra.Go')).toEqual({ resource: '/redfish/v1/Extra', name: '#Extra.Go', def });
  });
});
