// 8. Overload control: the adaptive throttling decision per attempt and the load shedder's
// per-request admission (ns per operation, ratios within each round), in-process like section 4.
import { do_not_optimize } from 'mitata';
import { compare } from './lib/harness.mjs';
import { SHEDDER_BASELINE, THROTTLE_BASELINE, overloadSubjects } from './lib/overload-subjects.mjs';

export async function benchOverload({ rounds, minCpuMs }) {
  const subjects = overloadSubjects();
  const group = (pick) => Object.fromEntries(Object.entries(subjects).filter(([name]) => pick(name)).map(([name, f]) => [name, () => do_not_optimize(f())]));
  const throttles = await compare(group((name) => !name.startsWith('LoadShedder')), { rounds, minCpuMs, baseline: THROTTLE_BASELINE });
  const shedders = await compare(group((name) => name.startsWith('LoadShedder')), { rounds, minCpuMs, baseline: SHEDDER_BASELINE });
  return { throttles, shedders };
}
