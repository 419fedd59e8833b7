// A resume's scope: options left out come back from the journal, options given must match it,
// and a check run never resumes as a real run (nor the reverse). Journals written before scopes
// were recorded still give theirs (from `options`). Extra-var hashes are salted per run.
import { describe, expect, it } from 'vitest';
import { modeLabel, reconcileScope, type ScopeOptions, scopeOf } from '../../src/journal/scope.js';
import { hashVars, newSalt, stableJson } from '../../src/journal/var-hash.js';

const scope = (o: Partial<ScopeOptions> = {}): ScopeOptions => ({ tags: [], skipTags: [], check: false, diff: false, ...o });

describe('reconcileScope', () => {
  it('restores what the command line left out', () => {
    const recorded = scope({ limit: 'node01', tags: ['deploy'], skipTags: ['slow'], startAtTask: 'Pull', check: true, diff: true, shard: { index: 2, total: 4 } });
    const r = reconcileScope(recorded, scope());
    expect(r.differences).toEqual([]);
    expect(r.scope).toEqual(recorded);
    expect(r.restored).toEqual(['--limit "node01"', '--tags deploy', '--skip-tags slow', '--start-at-task "Pull"', '--shard 2/4', '--check', '--diff']);
  });

  it('accepts the same options given again', () => {
    const recorded = scope({ limit: 'node01', tags: ['a', 'b'], check: true });
    const r = reconcileScope(recorded, scope({ limit: 'node01', tags: ['b', 'a'], check: true }));
    expect(r.differences).toEqual([]);
    expect(r.restored).toEqual([]);
  });

  it('names every option that would change the run', () => {
    const r = reconcileScope(scope({ limit: 'node01' }), scope({ limit: 'node02', tags: ['x'], startAtTask: 'T', shard: { index: 1, total: 2 }, diff: true }));
    expect(r.differences).toEqual([
      '--limit "node02" (the run had "node01")',
      '--tags x (the run had none)',
      '--start-at-task "T" (the run had none)',
      '--shard 1/2 (the run had none)',
      '--diff (the run had no --diff)',
    ]);
  });

  it('a limit given to a resume of an unlimited run is a difference', () => {
    expect(reconcileScope(scope(), scope({ limit: 'node01' })).differences).toEqual(['--limit "node01" (the run had none)']);
  });

  it('a check run resumes in check mode; a real run refuses --check', () => {
    const fromCheck = reconcileScope(scope({ check: true }), scope());
    expect(fromCheck.scope.check).toBe(true);
    expect(fromCheck.restored).toContain('--check');
    expect(reconcileScope(scope(), scope({ check: true })).differences[0]).toMatch(/^--check \(the run was a real run/);
  });

  it('a --rebuild run resumes with --rebuild (its admitted active nodes stay admitted); a resume may add it', () => {
    const kept = reconcileScope(scope({ rebuild: true }), scope());
    expect(kept.scope.rebuild).toBe(true);
    expect(kept.restored).toEqual(['--rebuild']);
    expect(kept.differences).toEqual([]);
    const added = reconcileScope(scope(), scope({ rebuild: true }));
    expect(added.scope.rebuild).toBe(true);
    expect(added.differences).toEqual([]);
    expect(reconcileScope(scope(), scope()).scope.rebuild).toBeUndefined();
  });
});

describe('scopeOf', () => {
  it('reads the recorded scope, or the options of an older journal', () => {
    const recorded = { ...scope({ limit: 'a' }), extraVars: { sources: [], salt: 's', hashes: {} } };
    expect(scopeOf({ scope: recorded, options: {} })).toBe(recorded);
    expect(scopeOf({ options: { limit: 'n1', tags: ['t'], skipTags: [], check: true, diff: false, shard: { index: 1, total: 3 }, extraVars: { pw: '********' } } })).toEqual({
      limit: 'n1',
      tags: ['t'],
      skipTags: [],
      check: true,
      diff: false,
      shard: { index: 1, total: 3 },
    });
  });

  it('labels modes', () => {
    expect([modeLabel(scope()), modeLabel(scope({ check: true })), modeLabel(scope({ diff: true })), modeLabel(scope({ check: true, diff: true }))]).toEqual([
      'normal',
      'check',
      'diff',
      'check+diff',
    ]);
  });
});

describe('extra-var hashes', () => {
  it('same value and salt hash alike; another salt, value or name does not; the value is not in the hash', async () => {
    const salt = newSalt();
    const a = await hashVars({ pw: 'admin', obj: { b: 1, a: 2 } }, salt);
    const b = await hashVars({ pw: 'admin', obj: { a: 2, b: 1 } }, salt);
    expect(a).toEqual(b);
    expect(Object.keys(a)).toEqual(['obj', 'pw']);
    expect((await hashVars({ pw: 'admin' }, newSalt())).pw).not.toBe(a.pw);
    expect((await hashVars({ pw: 'admin2' }, salt)).pw).not.toBe(a.pw);
    expect((await hashVars({ pw2: 'admin' }, salt)).pw2).not.toBe(a.pw);
    expect(JSON.stringify(a)).not.toContain('admin');
    expect(a.pw).not.toBe(Buffer.from('admin').toString('base64url'));
  });

  it('stableJson sorts keys at every level', () => {
    expect(stableJson({ b: [{ d: 1, c: 2 }], a: 'x' })).toBe('{"a":"x","b":[{"c":2,"d":1}]}');
  });
});
