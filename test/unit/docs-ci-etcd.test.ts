// docs/ci.md's worked examples for several controllers on one etcd (issue 32 point 4) stay true:
// each is valid YAML of its kind, every tsbm run in them is a command tsbm accepts, the shard
// count matches the jobs the example starts (matrix, parallel, Indexed Job completions), and the
// store setting parses as tsbm reads it, with no password in it.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseShard } from '../../src/executor/shard.js';
import { parseStoreSetting } from '../../src/nodes/setting.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const text = readFileSync(join(ROOT, 'docs/ci.md'), 'utf8');
const section = text.slice(text.indexOf('## Several controllers, one etcd'));

/** The ```yaml blocks of the etcd sections, dedented (the GitHub one is a fragment of a workflow). */
const blocks = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => {
  const lines = m[1]!.split('\n').filter((l) => l.trim() && !l.trimStart().startsWith('#'));
  const indent = Math.min(...lines.map((l) => /^ */.exec(l)![0].length));
  return parse(
    m[1]!
      .split('\n')
      .map((l) => l.slice(Math.min(indent, /^ */.exec(l)![0].length)))
      .join('\n'),
  ) as Record<string, unknown>;
});

type Obj = Record<string, unknown>;
const at = (o: unknown, ...path: (string | number)[]): unknown => path.reduce<unknown>((v, k) => (v as Obj | undefined)?.[k as string], o);

/** The `--shard I/N` of a command, with I substituted, and N. */
function shardTotal(command: string, index: string): number {
  const m = /--shard (.+?)\/(\d+)\b/.exec(command);
  expect(m, command).not.toBeNull();
  const shard = parseShard(`${index}/${m![2]}`);
  return shard.total;
}

/** A store setting as tsbm reads it (environment variables given), refused when it is not one. */
const setting = (value: string, env: Record<string, string> = {}) => parseStoreSetting(value, 'docs/ci.md', undefined, { env, uid: 0, home: '/' });

describe('docs/ci.md: several controllers on one etcd', () => {
  it('has the three worked examples: a GitHub matrix, a GitLab parallel job, a Kubernetes Indexed Job', () => {
    expect(blocks.length).toBe(3);
  });

  it('GitHub: one shard per matrix entry, each on the same etcd', () => {
    const job = at(blocks[0], 'deploy') as Obj;
    const shards = at(job, 'strategy', 'matrix', 'shard') as number[];
    const run = (at(job, 'steps') as Obj[]).map((s) => String(s.run ?? '')).find((r) => r.includes(' run '))!;
    expect(shardTotal(run, String(shards[0]))).toBe(shards.length);
    expect(shards).toEqual(shards.map((_, i) => i + 1));
    const env = at(job, 'env') as Record<string, string>;
    const s = setting(env.TSBM_STATE!, env);
    expect(s).toMatchObject({ kind: 'etcd', tls: { ca: env.TSBM_ETCD_CACERT, cert: env.TSBM_ETCD_CERT, key: env.TSBM_ETCD_KEY } });
  });

  it('GitLab: --shard $CI_NODE_INDEX/$CI_NODE_TOTAL under parallel, a user whose password comes from the environment', () => {
    const job = at(blocks[1], 'deploy') as Obj;
    const total = Number(job.parallel);
    const run = (job.script as string[]).find((l) => l.includes(' run '))!;
    expect(run).toContain('--shard $CI_NODE_INDEX/$CI_NODE_TOTAL');
    expect(parseShard(`1/${total}`).total).toBe(total);
    const vars = job.variables as Record<string, string>;
    expect(() => setting(vars.TSBM_STATE!, vars)).toThrow(/needs TSBM_ETCD_PASSWORD/);
    expect(setting(vars.TSBM_STATE!, { ...vars, TSBM_ETCD_PASSWORD: 'x' })).toMatchObject({ kind: 'etcd', auth: { username: vars.TSBM_ETCD_USER } });
  });

  it('Kubernetes: an Indexed Job whose completions are the shards, JOB_COMPLETION_INDEX + 1 as I, the client certificate mounted where the setting reads it', () => {
    const job = blocks[2]!;
    expect(job).toMatchObject({ apiVersion: 'batch/v1', kind: 'Job', spec: { completionMode: 'Indexed' } });
    const n = Number(at(job, 'spec', 'completions'));
    expect(Number(at(job, 'spec', 'parallelism'))).toBe(n);
    const container = at(job, 'spec', 'template', 'spec', 'containers', 0) as Obj;
    const command = (container.args as string[]).join(' ');
    expect(command).toMatch(/--shard \$\(\(JOB_COMPLETION_INDEX \+ 1\)\)\/\d+/);
    expect(shardTotal(command, '1')).toBe(n);
    const state = (container.env as { name: string; value: string }[]).find((e) => e.name === 'TSBM_STATE')!.value;
    const s = setting(state);
    expect(s.kind).toBe('etcd');
    const mount = String(at(container, 'volumeMounts', 0, 'mountPath'));
    if (s.kind === 'etcd') for (const f of Object.values(s.tls ?? {})) expect(f.startsWith(`${mount}/`), f).toBe(true);
    expect(at(job, 'spec', 'template', 'spec', 'restartPolicy')).toBe('Never');
  });
});
