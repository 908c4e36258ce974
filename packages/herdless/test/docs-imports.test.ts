// The guides' code blocks are what a new user copies first: every name they import from a herdless
// entry point must be exported by that entry point (a snippet that imports `decide` from `herdless`
// rather than `herdless/sim` fails at once for whoever pastes it).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as main from 'herdless';
import * as axios from 'herdless/axios';
import * as connect from 'herdless/connect';
import * as core from 'herdless/core';
import * as grpc from 'herdless/grpc';
import * as grpcJs from 'herdless/grpc-js';
import * as http from 'herdless/http';
import * as otel from 'herdless/otel';
import * as redis from 'herdless/redis';
import * as server from 'herdless/server';
import * as sim from 'herdless/sim';
import * as undici from 'herdless/undici';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRIES: Record<string, object> = {
  herdless: main,
  'herdless/axios': axios,
  'herdless/connect': connect,
  'herdless/core': core,
  'herdless/grpc': grpc,
  'herdless/grpc-js': grpcJs,
  'herdless/http': http,
  'herdless/otel': otel,
  'herdless/redis': redis,
  'herdless/server': server,
  'herdless/sim': sim,
  'herdless/undici': undici,
};

const files = [
  'README.md',
  'packages/herdless/README.md',
  'packages/lab/README.md',
  ...readdirSync(`${root}docs`).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
];

/** `file: name from entry` for every value import of a herdless entry in the file's ts/js code blocks. */
function imports(file: string): { entry: string; name: string }[] {
  const text = readFileSync(`${root}${file}`, 'utf8');
  const found: { entry: string; name: string }[] = [];
  for (const block of text.matchAll(/```(?:ts|js|typescript|mjs)\n([\s\S]*?)```/g)) {
    for (const m of block[1]!.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'(herdless(?:\/[a-z-]+)?)'/g)) {
      if (m[1] !== undefined) continue;
      for (const part of m[2]!.split(',').map((s) => s.trim())) {
        if (part === '' || part.startsWith('type ')) continue;
        found.push({ entry: m[3]!, name: part.split(/\s+as\s+/)[0]! });
      }
    }
  }
  return found;
}

describe('the guides import only what the entry points export', () => {
  it('finds the snippets it checks (README, package READMEs, docs/)', () => {
    expect(imports('README.md').map((i) => `${i.entry}:${i.name}`)).toContain('herdless:retry');
    expect(imports('docs/retry.md').map((i) => `${i.entry}:${i.name}`)).toContain('herdless/sim:decide');
  });

  it.each(files)('%s', (file) => {
    const missing = imports(file)
      .filter(({ entry, name }) => !(entry in ENTRIES) || !(name in ENTRIES[entry]!))
      .map(({ entry, name }) => `${name} from '${entry}'`);
    expect(missing).toEqual([]);
  });
});
