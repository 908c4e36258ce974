// The published declarations, as a user's project sees them: test/fixtures/consumer/use.ts is
// type-checked by tsc against dist/*.d.ts under exactOptionalPropertyTypes, without skipLibCheck
// and without the DOM lib (a Node-only project). The lab's global setup builds dist first.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/consumer', import.meta.url));
const project = mkdtempSync(join(tmpdir(), 'herdless-consumer-'));

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('the published types in a strict user project', () => {
  it('use.ts type-checks: exactOptionalPropertyTypes, skipLibCheck false, no DOM lib', () => {
    cpSync(fixture, project, { recursive: true });
    mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
    symlinkSync(join(root, 'packages', 'herdless'), join(project, 'node_modules', 'herdless'), 'dir');
    symlinkSync(join(root, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir');
    symlinkSync(join(root, 'node_modules', 'undici-types'), join(project, 'node_modules', 'undici-types'), 'dir');
    // The optional peer, as a user of herdless/grpc installs it.
    mkdirSync(join(project, 'node_modules', '@grpc'), { recursive: true });
    symlinkSync(join(root, 'node_modules', '@grpc', 'grpc-js'), join(project, 'node_modules', '@grpc', 'grpc-js'), 'dir');
    let output = '';
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  });
});
