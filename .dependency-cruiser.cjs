// Layer rules for src/ (`npm run lint` runs `depcruise`): imports only point down the order
// below, and there are no cycles; the lab package (packages/lab) and tsbm meet only by name. docs/architecture.md explains the layers; a test
// (test/unit/layers-lint.test.ts) plants an upward import and sees this config reject it.
// Lowest first; the entries of src/ in one layer may import each other (without cycles).
const LAYERS = {
  util: ['util', 'errors.ts', 'types.ts', 'vault'],
  base: ['output', 'schema', 'template', 'config'],
  io: ['redfish', 'http', 'images', 'journal', 'connection', 'configdrive', 'inventory', 'module-api', 'report', 'nodes'],
  modules: ['modules', 'ramdisk'],
  playbook: ['playbook'],
  executor: ['executor'],
  run: ['run'],
  cli: ['cli'],
};
const ORDER = Object.values(LAYERS);

const alt = (names) => names.map((n) => n.replace(/\./g, '\\.')).join('|');
const below = (i) => ORDER.slice(0, i).flat();
const above = (i) => ORDER.slice(i + 1).flat();

const upward = Object.entries(LAYERS).slice(0, -1).map(([name, layer], i) => ({
  name: `layer-${name}-imports-up`,
  comment: `src/{${layer.join(',')}} may import only ${below(i).length ? `src/{${below(i).join(',')}} and its own layer` : 'its own layer'}`,
  severity: 'error',
  from: { path: `^src/(${alt(layer)})(/|$)` },
  to: { path: `^src/(${alt(above(i))})(/|$)` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'an import cycle: split the shared part into a file both import',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-unknown-layer',
      comment: 'every file under src/ belongs to a layer listed in .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(${alt(ORDER.flat())})(/|$)` },
      to: {},
    },
    ...upward,
    {
      name: 'tsbm-imports-lab',
      comment: 'tsbm loads the simulated lab (packages/lab) by package name at run time, through src/inventory/sim-lab.ts only',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^packages/' },
    },
    {
      name: 'lab-reaches-into-tsbm',
      comment: 'the lab package imports tsbm by name (tsbm/lib/...), never by a relative path into src/',
      severity: 'error',
      from: { path: '^packages/lab/' },
      to: { path: '^src/', dependencyTypes: ['local'] },
    },
    {
      name: 'capability-imports-capability',
      comment:
        'a capability folder (src/modules/NAME/) imports module-api/ and the layers below, not another capability: move what both use to src/module-api/ (only the deploy preflight, which runs every capability\'s checks, and the module list import across)',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/', pathNot: '^src/modules/preflight/' },
      to: { path: '^src/modules/([^/]+)/', pathNot: '^src/modules/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|packages/lab/src)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
