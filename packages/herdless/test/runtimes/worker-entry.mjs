// The Workers-like run: the built library and scenario.mjs bundled for a runtime that has fetch and
// setTimeout but no setImmediate and no Node.js modules (as Cloudflare Workers). The bundle is a
// script that leaves the scenario on globalThis.
import * as herdless from '../../dist/index.js';
import { failedConnections } from './scenario.mjs';

globalThis.runFailedConnections = (refusedUrl, droppedUrl) => failedConnections({ herdless, fetch: globalThis.fetch, refusedUrl, droppedUrl });
