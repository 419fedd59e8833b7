// Advice for a Jinja filter chain that did not compile: the exact filters come from the one table
// jinja-expr.ts rewrites with; a few more only name the helper to look at.
import { describe, expect, it } from 'vitest';
import { jinjaAdvice } from '../../src/template/jinja.js';

const instead = (s: string) => jinjaAdvice(s)?.instead;

describe('jinjaAdvice for filter chains', () => {
  it('rewrites exact filters with their arguments', () => {
    expect(instead('{{ name | upper }}')).toBe('{{ upper name }}');
    expect(instead(`{{ path | replace('a', 'b') }}`)).toBe(`{{ replace path 'a' 'b' }}`);
    expect(instead(`{{ items | join(',') }}`)).toBe(`{{ join items ',' }}`);
  });

  it('names a close helper for a loose one, and an unknown filter as the helper to look for', () => {
    expect(instead('{{ port | int }}')).toBe('{{ port }}');
    expect(instead('{{ v | quote }}')).toBe('{{ quote v }}');
    expect(instead('{{ v | ipaddr }}')).toBe('{{ ipaddr v }}');
  });
});
