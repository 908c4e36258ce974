// What each entry pulls in at run time, read from the sources: the main entry stays free of the
// optional clients (and of Node built-ins), `herdless/connect` stays browser-safe (no grpc-js, no
// Node built-ins), and only `herdless/grpc-js` reaches grpc-js.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));
// Value imports and re-exports only: `import type` and `export type` vanish at run time.
const IMPORT = /^(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

/** Every bare (package or built-in) specifier reachable from `entry` through value imports. */
function externals(entry: string): Set<string> {
  const seen = new Set<string>();
  const out = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else out.add(spec);
    }
  };
  visit(resolve(src, entry));
  return out;
}

describe('run-time imports of each entry', () => {
  it('herdless (main): none at all', () => {
    expect([...externals('index.ts')]).toEqual([]);
  });
  it('herdless/connect: @connectrpc/connect and its own peer @bufbuild/protobuf only', () => {
    expect([...externals('connect/index.ts')].sort()).toEqual(['@bufbuild/protobuf', '@connectrpc/connect']);
  });
  it('herdless/grpc-js: @grpc/grpc-js only', () => {
    expect([...externals('grpc-js/index.ts')]).toEqual(['@grpc/grpc-js']);
  });
  it('herdless/grpc and herdless/core: none at all', () => {
    expect([...externals('grpc/index.ts')]).toEqual([]);
    expect([...externals('core/index.ts')]).toEqual([]);
  });
  it('herdless/server: none (node:http appears in types only); the main entry reaches none of its files', () => {
    expect([...externals('server/index.ts')]).toEqual([]);
  });
});

describe('the main entry and the server module', () => {
  it('the main entry reaches no file of herdless/server', () => {
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) if (m[1]!.startsWith('.')) visit(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
    };
    visit(resolve(src, 'index.ts'));
    expect(reached.size).toBeGreaterThan(20);
    expect([...reached].filter((f) => f.includes('/server/'))).toEqual([]);
  });
});
