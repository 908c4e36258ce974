import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The example of docs/layers.md, run as a user runs it (on the built package: the global setup builds it).
const example = fileURLToPath(new URL('../../../examples/three-services.mjs', import.meta.url));

describe('examples/three-services.mjs', () => {
  it('only the user retries: frontend 3, backend 3; the db sheds 4 (one retry of the first call, then "don\'t retry")', () => {
    const r = spawnSync(process.execPath, [example], { encoding: 'utf8', timeout: 300_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('user got 503 after 3 attempts (exhausted)');
    expect(lines[1]).toBe('requests received: frontend 3, backend 3, db 4');
    expect(JSON.parse(lines[2]!.replace('db load shedder: ', ''))).toMatchObject({ requests: 5, shed: 4, shedDoNotRetry: 3, retriesSeen: 1 });
  });
});
