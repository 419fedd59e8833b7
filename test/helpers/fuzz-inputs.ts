// Generators for fuzzing the loaders: YAML token soup, arbitrary strings, and YAML rendered from
// generated trees whose keys are the words inventories and playbooks use.
import fc from 'fast-check';
import { stringify } from 'yaml';

// One seed per suite run, shown in the fault table (npm run faults); TSBM_FUZZ_SEED replays a failure.
export const FUZZ_SEED = Number(process.env.TSBM_FUZZ_SEED) || Date.now() % 2 ** 31;

// Words the loaders care about, so generated documents get past the first "not a mapping" check.
const WORDS = [
  'all', 'hosts', 'vars', 'children', 'node01', 'web', 'ansible_host', 'ssh_port', 'tasks', 'name', 'debug', 'msg',
  'block', 'rescue', 'always', 'when', 'loop', 'register', 'roles', 'become', 'serial', 'gather_facts', 'shell',
  'command', 'set_fact', 'handlers', 'notify', 'until', 'retries', 'delay', 'tags', 'strategy', 'resume', 'x',
];
const key = fc.constantFrom(...WORDS);
const scalar = fc.oneof(
  fc.constantFrom('{{ x }}', '{{', '}}', '{{ x | nope }}', '', 'true', 'null', '0', '-1', '1e400', 'node[01:99]', 'rerun'),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const tree = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    scalar,
    fc.dictionary(key, tie('node'), { maxKeys: 5 }),
    fc.array(tie('node'), { maxLength: 4 }),
  ),
})).node;
// YAML syntax fragments: anchors, aliases, merges, tags, flow collections, block scalars, directives.
const token = fc.constantFrom(
  '- ', ': ', '\n', '  ', '    ', '{', '}', '[', ']', ', ', '&a ', '*a', '<<: *a', '!!str ', '!!map ', '!foo ', '? ', '| ', '>-',
  '# c', '"', "'", '---\n', '...\n', '%YAML 1.2\n', '\t', '\r\n', '\u0000', '\ufeff', 'é', ...WORDS,
);
const soup = fc.array(token, { maxLength: 40 }).map((a) => a.join(''));

/** Inputs of three kinds, each tagged so the fault table can say what was tried. */
export const inputs = (shape: 'inventory' | 'playbook') =>
  fc.oneof(
    soup.map((text) => ({ kind: 'YAML token soup', text })),
    fc.string({ maxLength: 300, unit: 'binary' }).map((text) => ({ kind: 'arbitrary strings', text })),
    (shape === 'playbook' ? fc.array(tree, { maxLength: 3 }) : tree).map((v) => ({ kind: 'YAML of generated trees', text: stringify(v) })),
  );

