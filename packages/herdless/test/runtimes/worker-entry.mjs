// The Workers-like run: the built library and scenario.mjs bundled for a runtime that has fetch and
// setTimeout but no setImmediate and no Node.js modules (as Cloudflare Workers). The bundle is a
// script that leaves the scenario on globalThis.
import * as main from '../../dist/index.js';
import * as http from '../../dist/http/index.js';

// The main entry and herdless/http, as a user's bundle would import them.
const herdless = { ...main, ...http };
import { failedConnections } from './scenario.mjs';

globalThis.runFailedConnections = (refusedUrl, droppedUrl) => failedConnections({ herdless, fetch: globalThis.fetch, refusedUrl, droppedUrl });
