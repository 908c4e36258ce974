/**
 * herdless/server — the server half of "retry at one layer": load shedding with `Retry-After`, the
 * "overloaded; don't retry" answer (SRE book, "Handling Overload"), and the propagation of a
 * downstream give-up, for node:http / express and fetch-style handlers.
 * @packageDocumentation
 */
export {
  loadShedder,
  type LoadShedding,
  type NodeMiddleware,
  type NodeHandler,
  type NodeHandlerContext,
  requestSignal,
  type NodeRequest,
  type NodeResponse,
  type FetchHandler,
} from './load-shedder.js';
export { LoadShedder, type LoadShedderStats, type Admission, type ShedReason } from './shedder.js';
export type { LoadShedderOptions, LoadShedderConfig, NodeRequestLike } from './options.js';
export { giveUpAnswer, type ServerAnswer } from './answers.js';
export { ATTEMPT_HEADER, DO_NOT_RETRY_HEADER } from '../core/wire.js';
export { isGivenUp } from '../core/classify/hints.js';
