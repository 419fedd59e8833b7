// `tsbm run` refuses a broken playbook before its first task (issue 17): for each kind of
// error, in a task after one that touches a file on every host, the run exits 4, names the
// position, and the file is never touched, in plain and in JSON output (and JUnit). A playbook
// whose later tasks read registered values, facts, set_fact, loops, -e, role defaults and an
// include still runs. The shipped deploy-ramdisk.yml on the simulated lab is refused before
// any node is powered (issue 21 item 3).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventSchema } from '../../src/output/event-schema.js';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tsbm.js');
const dir = mkdtempSync(join(tmpdir(), 'tsbm-preflight-run-'));
const validateEvent = new Ajv({ strict: false }).compile(eventSchema);

async function tsbm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, [bin, ...args], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 120_000,
    });
    return { code: 0, ...r };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/** The third task of each playbook holds one kind of error; the first touches a file per host. */
const KINDS: Record<string, { task: string; at: string; message: RegExp }> = {
  'template-syntax': {
    task: '      debug:\n        msg: "{{ x }"',
    at: '11:14',
    message: /template syntax error: /,
  },
  'jinja-expression': {
    task: '      debug:\n        msg: "{{ x | upper }}"',
    at: '11:14',
    message: /template syntax error: Jinja-style expression \{\{ x \| upper \}\}.*write \{\{ upper x \}\}/,
  },
  'undefined-variable': {
    task: '      debug:\n        msg: "{{ nosuchvar }}"',
    at: '11:14',
    message: /undefined variable "nosuchvar" in task "Third" for hosts alpha, beta/,
  },
  'unclosed-if': {
    task: '      debug:\n        msg: "{{#if x}}yes"',
    at: '11:14',
    message: /template syntax error: \{\{#if\}\} is never closed/,
  },
  'jinja-condition': {
    task: '      debug:\n        msg: hi\n      when: x == "a"',
    at: '12:13',
    message: /condition syntax error: Jinja-style expression x == "a".*write eq x "a"/,
  },
  'dotted-path': {
    task: '      debug:\n        msg: "{{ info.boot_iso }}"',
    at: '11:14',
    message: /undefined variable "info.boot_iso" in task "Third" for hosts alpha, beta/,
  },
};

function playbook(third: string): string {
  return `- name: Demo
  hosts: all
  gather_facts: false
  tasks:
    - name: Touch
      command: touch {{ marker }}-{{ inventory_hostname }}
    - name: Second
      command: /bin/true
    - name: Third
${third}
`;
}

const touched = () => readdirSync(join(dir, 'marks'));

beforeAll(async () => {
  // npm test builds first; compiling here would swap dist/ (and its built module list) under the
  // test files running at the same time.
  if (!existsSync(join(root, 'dist/cli/main.js'))) throw new Error('run `npm run build` first');
  mkdirSync(join(dir, 'marks'));
  writeFileSync(
    join(dir, 'inv.yml'),
    'all:\n  hosts:\n    alpha: { connection: local }\n    beta: { connection: local }\n  vars:\n    x: a\n    info: { name: n1 }\n',
  );
  for (const [kind, k] of Object.entries(KINDS)) writeFileSync(join(dir, `${kind}.yml`), playbook(k.task));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.concurrent('tsbm run refuses each kind of error before the first task', { timeout: 120_000 }, () => {
  for (const [kind, k] of Object.entries(KINDS)) {
    it(`${kind}: plain`, async () => {
      const r = await tsbm(['run', `${kind}.yml`, '-i', 'inv.yml', '-e', `marker=marks/${kind}-plain`, '--output', 'plain']);
      expect(r.code).toBe(4);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.startsWith(`${kind}.yml:${k.at}: `)).toBe(true);
      expect(lines[0]).toMatch(k.message);
      expect(r.stderr).toMatch(/^tsbm: error: 1 error in .* found before the first task; nothing was run on any host/);
      expect(touched().filter((f) => f.startsWith(`${kind}-plain`))).toEqual([]);
      expect(existsSync(join(dir, '.tsbm/runs'))).toBe(false); // no journal for a run that never started
    });

    it(`${kind}: json`, async () => {
      const r = await tsbm(['run', `${kind}.yml`, '-i', 'inv.yml', '-e', `marker=marks/${kind}-json`, '--output', 'json', '--no-journal']);
      expect(r.code).toBe(4);
      const events = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; message?: string });
      for (const e of events) expect(validateEvent(e), JSON.stringify(validateEvent.errors)).toBe(true);
      const [line, col] = k.at.split(':').map(Number);
      expect(events.map((e) => e.type)).toEqual(['validation_error', 'run_end']);
      expect(events[0]).toMatchObject({ pos: { file: `${kind}.yml`, line, col } });
      expect(`${events[0]!.message} (${(events[0] as { hint?: string }).hint})`).toMatch(k.message);
      expect(events[1]).toMatchObject({ exitCode: 4 });
      expect(touched().filter((f) => f.startsWith(`${kind}-json`))).toEqual([]);
    });
  }
});

describe('tsbm run lists every error at once, in every output mode', { timeout: 120_000 }, () => {
  beforeAll(() => {
    const all = Object.values(KINDS)
      .map((k, i) => `    - name: Broken ${i}\n${k.task}`)
      .join('\n');
    writeFileSync(join(dir, 'all.yml'), playbook('      command: /bin/true') + `${all}\n`);
  });

  it('plain lists six positioned lines; JSON six events; JUnit six failed testcases', async () => {
    const plain = await tsbm(['run', 'all.yml', '-i', 'inv.yml', '-e', 'marker=marks/all-plain', '--output', 'plain', '--no-journal']);
    expect(plain.code).toBe(4);
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(6);
    for (const l of lines) expect(l).toMatch(/^all\.yml:\d+:\d+: /);
    expect(plain.stderr).toMatch(/6 errors in all\.yml/);

    const junit = join(dir, 'all.xml');
    const json = await tsbm(['run', 'all.yml', '-i', 'inv.yml', '-e', 'marker=marks/all-json', '--output', 'json', '--junit', junit, '--no-journal']);
    expect(json.code).toBe(4);
    const events = json.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; message: string; hint?: string; pos: { line: number; col: number } });
    const errors = events.filter((e) => e.type === 'validation_error');
    // the same problems, in the same order, as the plain lines
    const asLine = (e: { message: string; hint?: string; pos: { line: number; col: number } }) =>
      `all.yml:${e.pos.line}:${e.pos.col}: ${e.message}${e.hint ? ` (${e.hint})` : ''}`;
    expect(errors.map(asLine)).toEqual(lines);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<testsuites name="tsbm" tests="6" failures="6"/);
    expect([...xml.matchAll(/<failure /g)]).toHaveLength(6);
    expect(touched().filter((f) => f.startsWith('all-'))).toEqual([]);
  });

  it('--report: no report for a run that did not start, and it says so', async () => {
    const r = await tsbm(['run', 'all.yml', '-i', 'inv.yml', '-e', 'marker=marks/all-report', '--report', 'r.html', '--journal-dir', 'rj']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/no report written to r\.html: the run did not start/);
    expect(existsSync(join(dir, 'r.html'))).toBe(false);
    expect(existsSync(join(dir, 'rj'))).toBe(false);
  });

  it('--syntax-check and --check run the same checks', async () => {
    for (const flag of ['--syntax-check', '--check']) {
      const r = await tsbm(['run', 'all.yml', '-i', 'inv.yml', '-e', 'marker=marks/all-flag', flag, '--no-journal']);
      expect(r.code, flag).toBe(4);
      expect(r.stdout.trimEnd().split('\n'), flag).toHaveLength(6);
    }
    const ok = await tsbm(['run', 'undefined-variable.yml', '-i', 'inv.yml', '-e', 'nosuchvar=1 marker=marks/ok-flag', '--syntax-check']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe('playbook: undefined-variable.yml\n');
    expect(touched().filter((f) => f.includes('-flag'))).toEqual([]);
  });

  it('checks only what the run targets: a --limit, --tags or --start-at-task that leaves the error out runs', async () => {
    writeFileSync(
      join(dir, 'inv-split.yml'),
      'all:\n  hosts:\n    alpha: { connection: local, info: { boot_iso: x } }\n    beta: { connection: local, info: {} }\n',
    );
    const limited = await tsbm(['run', 'dotted-path.yml', '-i', 'inv-split.yml', '-e', 'marker=marks/limit', '-l', 'alpha', '--no-journal']);
    expect(limited.code).toBe(0);
    expect(touched()).toContain('limit-alpha');
    const refused = await tsbm(['run', 'dotted-path.yml', '-i', 'inv-split.yml', '-e', 'marker=marks/limit-b', '-l', 'beta', '--no-journal']);
    expect(refused.code).toBe(4);
    expect(refused.stdout).toMatch(/for host beta /);
    writeFileSync(
      join(dir, 'startat.yml'),
      `- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Broken\n${KINDS['dotted-path']!.task}\n    - name: Touch\n      command: touch {{ marker }}-{{ inventory_hostname }}\n`,
    );
    const started = await tsbm(['run', 'startat.yml', '-i', 'inv.yml', '-e', 'marker=marks/start', '--start-at-task', 'Touch', '--no-journal']);
    expect(started.code).toBe(0);
    expect(touched()).toContain('start-beta');
    expect((await tsbm(['run', 'startat.yml', '-i', 'inv.yml', '-e', 'marker=marks/start2', '--no-journal'])).code).toBe(4);
    writeFileSync(join(dir, 'tagged.yml'), playbook(`${KINDS['dotted-path']!.task}\n      tags: [later]`));
    const tagged = await tsbm(['run', 'tagged.yml', '-i', 'inv.yml', '-e', 'marker=marks/tags', '--skip-tags', 'later', '--no-journal']);
    expect(tagged.code).toBe(0);
    expect(touched()).toContain('tags-beta');
  });
});

describe('a playbook whose later tasks read what earlier ones made still runs', { timeout: 120_000 }, () => {
  it('registered values, facts, set_fact, loops, -e, role defaults and include_tasks', async () => {
    mkdirSync(join(dir, 'roles/knobs/defaults'), { recursive: true });
    mkdirSync(join(dir, 'roles/knobs/tasks'), { recursive: true });
    writeFileSync(join(dir, 'roles/knobs/defaults/main.yml'), 'knobs: { level: 3, name: "{{ inventory_hostname }}-knob" }\n');
    writeFileSync(join(dir, 'roles/knobs/tasks/main.yml'), '- name: Role default\n  debug: { msg: "{{ knobs.level }} {{ knobs.name }}" }\n');
    writeFileSync(join(dir, 'inc.yml'), '- name: In the include\n  debug: { msg: "{{ out.stdout }} {{ inc.key }}" }\n');
    writeFileSync(
      join(dir, 'reads.yml'),
      `- name: Later tasks read what earlier ones made
  hosts: all
  gather_facts: true
  roles: [knobs]
  tasks:
    - name: Touch
      command: touch {{ marker }}-{{ inventory_hostname }}
    - name: Register
      command: echo hello
      register: out
    - name: Read the registered value
      debug: { msg: "{{ out.stdout }} {{ out.rc }} {{ out.stdout_lines }}" }
      failed_when: "ne out.stdout 'hello'"
    - name: Read facts
      debug: { msg: "{{ facts.memory.total_mb }} {{ ansible_facts.kernel }}" }
    - name: Set a fact
      set_fact:
        made: { nested: "{{ out.stdout }}-{{ inventory_hostname }}" }
    - name: Read it
      debug: { msg: "{{ made.nested }}" }
    - name: Loop
      debug: { msg: "{{ item.name }} {{ extra.key }}" }
      loop: [{ name: a }, { name: b }]
    - name: Another host's registered value
      debug: { msg: "{{ hostvars.alpha.out.stdout }}" }
    - name: Include
      include_tasks: inc.yml
      vars:
        inc: { key: v }
`,
    );
    const r = await tsbm(['run', 'reads.yml', '-i', 'inv.yml', '-e', '{"marker": "marks/reads", "extra": {"key": 1}}', '--output', 'plain', '--no-journal']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok: \[alpha\] In the include .*: hello v$/m);
    expect(r.stdout).toMatch(/^ok: \[beta\] Read it .*: hello-beta$/m);
    expect(touched()).toEqual(expect.arrayContaining(['reads-alpha', 'reads-beta']));
  });
});

describe('the shipped deploy-ramdisk.yml on the simulated lab (issue 21 item 3)', { timeout: 180_000 }, () => {
  it('is refused before any node is touched, naming instance_info.boot_iso for every node', async () => {
    const r = await tsbm([
      'run',
      join(root, 'playbooks/deploy-ramdisk.yml'),
      '-i',
      join(root, 'inventory-examples/sim.yml'),
      '--output',
      'json',
      '--journal-dir',
      join(dir, 'journals'),
    ]);
    expect(r.code).toBe(4);
    const events = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(events.map((e) => e.type)).toEqual(['validation_error', 'run_end']);
    expect(events[0]).toMatchObject({
      message:
        'undefined variable "instance_info.boot_iso" (read through "instance_iso") in task "Insert the instance ISO" for hosts node01, node02, node03',
      pos: { file: join(root, 'playbooks/roles/boot-instance-iso/tasks/main.yml'), line: 5, col: 12 },
      hosts: ['node01', 'node02', 'node03'],
    });
    expect(existsSync(join(dir, 'journals'))).toBe(false); // no task, no lock, no journal
  });
});
