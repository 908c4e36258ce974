// `npm run bench`: every benchmark of the project, in one process. Never part of `npm test`.
import { benchHerdTable } from './herd-table.mjs';

for (const r of await benchHerdTable()) {
  console.log(
    `herd full table (120 runs), ${r.workers === 0 ? 'one thread' : `${r.workers} workers`}: median ${(r.median / 1000).toFixed(2)} s ` +
      `(min ${(r.min / 1000).toFixed(2)}-max ${(r.max / 1000).toFixed(2)}); ${((r.events / r.median) * 1000 / 1e6).toFixed(0)} M request events/s; ` +
      `${(37_000 / r.median).toFixed(1)}× faster than the 37 s CPython model`,
  );
}
