// docs/versioning.md publishes the main entry's names as the stable surface: the list there and
// what `herdless` exports must be the same names, and the main entry stays what callers use (at most
// 50 values; everything else has a subpath).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as main from 'herdless';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The published lists: `values` and `types`, each the names after the group labels. */
function published(): { values: string[]; types: string[] } {
  const doc = readFileSync(`${root}docs/versioning.md`, 'utf8');
  const block = /## The main entry: the stable surface[\s\S]*?```text\n([\s\S]*?)```/.exec(doc);
  if (block === null) throw new Error('docs/versioning.md has no stable-surface list');
  const lists: { values: string[]; types: string[] } = { values: [], types: [] };
  let current: string[] | undefined;
  for (const line of block[1]!.split('\n')) {
    if (/^values\b/.test(line)) current = lists.values;
    else if (/^types\b/.test(line)) current = lists.types;
    // A group line: a label in the first 16 columns, then names; a continuation: names only.
    else if (current !== undefined && line.trim() !== '') current.push(...line.slice(16).trim().split(/\s+/));
  }
  return lists;
}

/** The type-only names index.ts exports (`type X` inside a value export, or `export type { … }`). */
function exportedTypes(): string[] {
  const source = readFileSync(fileURLToPath(new URL('../src/index.ts', import.meta.url)), 'utf8');
  const names: string[] = [];
  for (const m of source.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const part of m[2]!.split(',').map((s) => s.trim())) {
      if (part === '') continue;
      if (m[1] !== undefined) names.push(part);
      else if (part.startsWith('type ')) names.push(part.slice(5).trim());
    }
  }
  return names;
}

describe('the main entry is the published stable surface', () => {
  it('its values are exactly the published values, and there are at most 50', () => {
    const { values } = published();
    expect(values).toContain('retry');
    expect(Object.keys(main).sort()).toEqual([...values].sort());
    expect(Object.keys(main).length).toBeLessThanOrEqual(50);
  });

  it('its types are exactly the published types', () => {
    expect(exportedTypes().sort()).toEqual([...published().types].sort());
  });
});
