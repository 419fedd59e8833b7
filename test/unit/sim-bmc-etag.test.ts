// The fake BMC's ETags: one serialization gives both the tag and the body that carries it.
import { describe, expect, it } from 'vitest';
import { etagOf, taggedJson } from '../../packages/lab/src/bmc/state.js';

describe('taggedJson', () => {
  it('the body is the resource plus @odata.etag, and the tag ignores an old tag', () => {
    const r = { '@odata.id': '/redfish/v1/Systems/1', '@odata.etag': 'W/"old"', PowerState: 'On', Boot: { BootSourceOverrideTarget: 'Cd' } };
    const { text, etag } = taggedJson(r);
    expect(JSON.parse(text)).toEqual({ ...r, '@odata.etag': etag });
    expect(etag).toMatch(/^W\/"[0-9a-f]{16}"$/);
    expect(etagOf({ ...r, '@odata.etag': 'W/"other"' })).toBe(etag);
    expect(etagOf({ ...r, PowerState: 'Off' })).not.toBe(etag);
  });
  it('an empty resource still gets its tag', () => {
    const { text, etag } = taggedJson({});
    expect(JSON.parse(text)).toEqual({ '@odata.etag': etag });
  });
});
