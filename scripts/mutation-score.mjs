// The mutation score per area, from Stryker's JSON reports (one per run of `npm run mutation`), against
// the project's thresholds: 95 % on the library's core, 90 % on the simulator engine, the HTTP hint
// parsers, the runtime, herdless/server, herdless/redis and the rest of herdless/http. Stryker itself
// has one threshold per run; this holds each area to its own.
//
//   node scripts/mutation-score.mjs [--report path]... [--require-all]
//
// --report: a Stryker JSON report, repeatable (default: reports/mutation/mutation.json and
// reports/mutation-{engine,runtime,server,redis,http}/mutation.json, the runs of `npm run mutation`; a missing
// default is skipped).
// --require-all: an area with no mutant in the report fails (the full run must cover every area).
// Score = (killed + timed out) / (killed + timed out + survived + no coverage), Stryker's own
// formula; static mutants that the run ignored (`ignoreStatic`) and mutants marked equivalent
// (a disable comment in the source) are not in it, and are counted apart.
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const HINT_PARSERS = ['packages/herdless/src/http/retry-after.ts', 'packages/herdless/src/http/http-date.ts'];
const AREAS = [
  { name: 'core/', threshold: 95, test: (file) => file.startsWith('packages/herdless/src/core/') },
  { name: 'sim/engine.ts', threshold: 90, test: (file) => file === 'packages/herdless/src/sim/engine.ts' },
  {
    name: 'hint parsers (http/retry-after.ts, http/http-date.ts)',
    threshold: 90,
    test: (file) => HINT_PARSERS.includes(file),
  },
  { name: 'runtime/', threshold: 90, test: (file) => file.startsWith('packages/herdless/src/runtime/') },
  { name: 'server/', threshold: 90, test: (file) => file.startsWith('packages/herdless/src/server/') },
  { name: 'redis/', threshold: 90, test: (file) => file.startsWith('packages/herdless/src/redis/') },
  {
    name: 'http/ (but the hint parsers)',
    threshold: 90,
    test: (file) => file.startsWith('packages/herdless/src/http/') && !HINT_PARSERS.includes(file),
  },
];

const { values } = parseArgs({
  options: { report: { type: 'string', multiple: true }, 'require-all': { type: 'boolean', default: false } },
});

const DEFAULT_REPORTS = ['', '-engine', '-runtime', '-server', '-redis', '-http'].map((run) => `reports/mutation${run}/mutation.json`);
const paths = values.report ?? DEFAULT_REPORTS.filter((p) => existsSync(p));
if (paths.length === 0) {
  console.error(`mutation-score: no report found (${DEFAULT_REPORTS.join(', ')}): run npm run mutation first`);
  process.exit(2);
}
const files = {};
for (const path of paths) {
  try {
    Object.assign(files, JSON.parse(readFileSync(path, 'utf8')).files);
  } catch (error) {
    console.error(`mutation-score: cannot read the report ${path}: ${error.message}`);
    process.exit(2);
  }
}

// Stryker reports both static mutants (with ignoreStatic) and mutants set aside by a disable
// comment (the ones marked equivalent) as "Ignored"; the reason tells them apart.
const STATUSES = ['Killed', 'Timeout', 'Survived', 'NoCoverage'];
const empty = () => ({ Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, static: 0, equivalent: 0, errors: 0 });
const tally = (c, m) => {
  if (STATUSES.includes(m.status)) c[m.status]++;
  else if (m.status === 'Ignored') c[m.statusReason?.startsWith('Static mutant') ? 'static' : 'equivalent']++;
  else c.errors++; // CompileError, RuntimeError: not in the score, as in Stryker's own
};
const score = (c) => {
  const valid = c.Killed + c.Timeout + c.Survived + c.NoCoverage;
  return valid === 0 ? NaN : (100 * (c.Killed + c.Timeout)) / valid;
};

const totals = new Map(AREAS.map((a) => [a, { ...empty(), files: 0 }]));
const rows = [];
for (const [file, { mutants }] of Object.entries(files)) {
  const c = empty();
  for (const m of mutants) tally(c, m);
  rows.push({ file, c });
  const area = AREAS.find((a) => a.test(file));
  if (area === undefined) continue;
  const t = totals.get(area);
  for (const k of Object.keys(c)) t[k] += c[k];
  t.files++;
}

const pct = (x) => (Number.isNaN(x) ? '—' : `${x.toFixed(2)} %`);
console.log('file | score | killed | timeout | survived | no coverage | static (ignored) | marked equivalent');
for (const { file, c } of rows.sort((a, b) => a.file.localeCompare(b.file))) {
  console.log(`${file} | ${pct(score(c))} | ${c.Killed} | ${c.Timeout} | ${c.Survived} | ${c.NoCoverage} | ${c.static} | ${c.equivalent}`);
}
console.log('');
let failed = false;
for (const [area, t] of totals) {
  const s = score(t);
  let verdict;
  if (t.files === 0) {
    verdict = values['require-all'] ? 'FAIL: not in this run' : 'not in this run';
    if (values['require-all']) failed = true;
  } else if (s < area.threshold) {
    verdict = `FAIL: under ${area.threshold} %`;
    failed = true;
  } else {
    verdict = `ok (threshold ${area.threshold} %)`;
  }
  console.log(`${area.name}: ${pct(s)} over ${t.Killed + t.Timeout + t.Survived + t.NoCoverage} mutants in ${t.files} files (${t.Survived} survived, ${t.NoCoverage} without coverage; ${t.static} static left out, ${t.equivalent} marked equivalent) — ${verdict}`);
}
process.exit(failed ? 1 : 0);
