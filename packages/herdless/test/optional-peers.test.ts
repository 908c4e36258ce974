// The optional peers (@opentelemetry/api, undici, axios) are needed only by their own subpaths: a
// project without them imports `herdless` and `herdless/http` fine, and gets a clear module error
// for `herdless/otel`, `herdless/undici`, `herdless/axios`. Runs the built package (the lab's
// global setup builds dist first) in a temp project whose node_modules holds herdless alone.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const project = mkdtempSync(join(tmpdir(), 'herdless-peers-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** Imports `specifier` in the bare project; the error's code, or 'ok' and the export count. */
function importIn(specifier: string): string {
  const script = `import(${JSON.stringify(specifier)}).then((m) => console.log('ok', Object.keys(m).length > 0), (e) => console.log(e.code ?? e.message))`;
  // --preserve-symlinks: herdless resolves its imports from the bare project, not from the repository's node_modules.
  return execFileSync(process.execPath, ['--preserve-symlinks', '--input-type=module', '-e', script], { cwd: project, encoding: 'utf8' }).trim();
}

describe('optional peer dependencies', () => {
  it('herdless and herdless/http import without them; each integration subpath needs its own peer', () => {
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
    symlinkSync(join(root, 'packages', 'herdless'), join(project, 'node_modules', 'herdless'), 'dir');
    expect(importIn('herdless')).toBe('ok true');
    expect(importIn('herdless/http')).toBe('ok true');
    expect(importIn('herdless/sim')).toBe('ok true');
    expect(importIn('herdless/otel')).toBe('ERR_MODULE_NOT_FOUND');
    expect(importIn('herdless/undici')).toBe('ok true'); // type-only use of undici: nothing to load
    expect(importIn('herdless/axios')).toBe('ERR_MODULE_NOT_FOUND');
    // Type-only use of fastify and hono: the plugin and the middleware load without them.
    expect(importIn('herdless/fastify')).toBe('ok true');
    expect(importIn('herdless/hono')).toBe('ok true');
  });
});
