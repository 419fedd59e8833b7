// The Handlebars rewrite tsbm suggests for a Jinja template or condition is checked against
// Jinja itself: the suggestion must compile in tsbm and give what Jinja2 (Ansible's engine, here
// python3's jinja2) gives for the same variables. Every case is also refused by validate.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { checkTemplateSyntax, evalCondition, renderText } from '../../src/template/index.js';
import { jinjaAdvice } from '../../src/template/jinja.js';

const jinja = spawnSync('python3', ['-c', 'import jinja2'], { encoding: 'utf8' });
const hasJinja = jinja.status === 0;

const VARS = [
  { ssh_port: 2222, x: 'a', list: ['a', 'b'], flag: true, name: 'node1', m: { k: 'v' } },
  { ssh_port: 22, x: 'b', list: ['c'], flag: false, name: 'NODE2', m: { k: 'w' } },
  { x: 'c', list: [], flag: false, name: ' n3 ', m: { k: 'v' } },
];

const CONDITIONS = [
  'ssh_port is defined and ssh_port > 1000', // the garbled rewrite of issue 31
  'x == "a"',
  'x != "a" and not flag',
  'ssh_port is not defined or x in list',
  'x not in list',
  '(flag or x == "c") and ssh_port is undefined',
  "m['k'] == 'v'",
  'list | length > 0',
  'name | lower == "node2"',
  'not (ssh_port is defined)',
];

const TEMPLATES = [
  '{% if flag %}on{% else %}off{% endif %}',
  '{% if ssh_port is defined and ssh_port > 1000 %}high{% elif x == "b" %}b{% else %}other{% endif %}',
  '{% for i in list %}[{{ i }}]{% endfor %}',
  'host {{ name | upper }} {# a note #}port {{ ssh_port | default(22) }}',
  "{{ m['k'] }}-{{ name | trim }}",
  '{{ x if flag else "no" }}',
];

function jinjaRender(templates: string[], vars: object[]): string[][] {
  const script = `
import json, sys, jinja2
data = json.load(sys.stdin)
env = jinja2.Environment(undefined=jinja2.StrictUndefined)
print(json.dumps([[env.from_string(t).render(**v) for v in data["vars"]] for t in data["templates"]]))`;
  const r = spawnSync('python3', ['-c', script], { input: JSON.stringify({ templates, vars }), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

const ctx = (vars: object) => ({ vars: vars as Record<string, unknown>, baseDir: '/' });

describe('Jinja is refused by validate, with a rewrite', () => {
  it.each(CONDITIONS)('condition %s', (c) => {
    const e = checkTemplateSyntax(c, { file: 'p.yml', line: 1, col: 1 }, true);
    expect(e?.hint).toMatch(/^write /);
  });
  it.each(TEMPLATES)('template %s', (t) => {
    const e = checkTemplateSyntax(t, { file: 'p.yml', line: 1, col: 1 });
    expect(e?.message, t).toMatch(/Jinja-style/);
  });
});

describe.skipIf(!hasJinja)('the rewrite means what the Jinja meant (compared with jinja2)', () => {
  it('conditions', () => {
    const expected = jinjaRender(
      CONDITIONS.map((c) => `{% if ${c} %}true{% else %}false{% endif %}`),
      VARS,
    );
    for (const [i, c] of CONDITIONS.entries()) {
      const instead = jinjaAdvice(c, true)?.instead;
      expect(instead, c).toBeDefined();
      expect(checkTemplateSyntax(instead!, { file: 'p.yml', line: 1, col: 1 }, true), `${c} -> ${instead}`).toBeUndefined();
      const ours = VARS.map((v) => String(evalCondition(instead!, ctx(v))));
      expect(ours, `${c} -> ${instead}`).toEqual(expected[i]);
    }
  });

  it('templates', () => {
    const expected = jinjaRender(TEMPLATES, VARS);
    for (const [i, t] of TEMPLATES.entries()) {
      const instead = jinjaAdvice(t)?.instead;
      expect(instead, t).toBeDefined();
      if (!/\{%/.test(t)) continue; // one {{ }} expression advised at a time: checked below
      expect(checkTemplateSyntax(instead!, { file: 'p.yml', line: 1, col: 1 }), `${t} -> ${instead}`).toBeUndefined();
      expect(VARS.map((v) => renderText(instead!, ctx(v))), `${t} -> ${instead}`).toEqual(expected[i]);
    }
  });
});

if (!hasJinja) it.skip('Jinja rewrites vs jinja2: SKIPPED because python3 jinja2 is not installed (ansible-core brings it)', () => {});
