#!/usr/bin/env node
// `npm run faults`: renders the fault table from the rows the last test run left in
// test-results/fault-rows/*.json (one file per test file that tries faults or fuzzed inputs)
// into test-results/FAULTS.md. The test run itself writes only rows, and only outside what
// git tracks, so `npm test` leaves the work tree as it found it.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const RESULTS = resolve(import.meta.dirname, '..', 'test-results');
const ROWS = join(RESULTS, 'fault-rows');
const OUT = join(RESULTS, 'FAULTS.md');

const cell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

if (!existsSync(ROWS)) {
  console.error(`no fault rows in ${ROWS}: run the tests first (npm test)`);
  process.exit(1);
}
const lines = [
  '# Faults and inputs tried by the test suite',
  '',
  'Rendered by `npm run faults` from test-results/fault-rows/*.json, which the fault and fuzz',
  'tests write (test/helpers/fault-table.ts). "cases" counts runs, kill points or generated inputs.',
  'Each section is the last run of that test file; a seed shown replays it (TSBM_FAULT_SEED /',
  'TSBM_FUZZ_SEED).',
  '',
  'Also fuzzed elsewhere (no rows here): templating (test/unit/template-*.test.ts), argv quoting',
  'round-tripped through a real `sh` (test/unit/quote-roundtrip.test.ts), and the ISO 9660 writer',
  'read back with isoinfo/xorriso (test/integration/configdrive-iso9660.test.ts).',
  '',
];
for (const name of readdirSync(ROWS).filter((n) => n.endsWith('.json')).sort()) {
  let rows;
  try {
    rows = JSON.parse(readFileSync(join(ROWS, name), 'utf8'));
  } catch {
    continue; // a rows file cut short by a killed run: left out rather than failing
  }
  lines.push(`## ${name.slice(0, -5)}`, '', '| fault / input class | how | cases | outcome | result |', '|---|---|---:|---|---|');
  for (const r of rows) lines.push(`| ${cell(r.fault)} | ${cell(r.how)} | ${r.cases} | ${cell(r.outcome)} | ${r.result} |`);
  lines.push('');
}
writeFileSync(OUT, lines.join('\n'));
console.log(`wrote ${OUT}`);
