/* global URLSearchParams, location, window, document */
// The page of the chromium run: the built library and scenario.mjs, bundled. The URLs come in the
// query string; the record goes to window.herdlessRecord and <body data-done>.
import * as main from '../../dist/index.js';
import * as http from '../../dist/http/index.js';

// The main entry and herdless/http, as a user's bundle would import them.
const herdless = { ...main, ...http };
import { failedConnections } from './scenario.mjs';

const query = new URLSearchParams(location.search);
failedConnections({ herdless, fetch: globalThis.fetch, refusedUrl: query.get('refused'), droppedUrl: query.get('dropped') }).then(
  (record) => {
    window.herdlessRecord = record;
    document.body.dataset.done = 'true';
  },
  (error) => {
    window.herdlessRecord = { crashed: String(error && error.stack) };
    document.body.dataset.done = 'true';
  },
);
