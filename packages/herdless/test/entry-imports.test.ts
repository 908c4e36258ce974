// The main entry is browser-safe: nothing it reaches imports a Node.js module or the server module.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));

/** Every module `entry` reaches through static and dynamic imports, and every specifier they import. */
function graph(entry: string): { files: Set<string>; specifiers: Set<string> } {
  const files = new Set<string>();
  const specifiers = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)|(?:^|\n)\s*import\s+'([^']+)'/g)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      specifiers.add(specifier);
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
    }
  };
  visit(entry);
  return { files, specifiers };
}

describe('the main entry', () => {
  it('imports no Node.js module and nothing of herdless/server', () => {
    const { files, specifiers } = graph(resolve(src, 'index.ts'));
    expect(files.size).toBeGreaterThan(20);
    expect([...specifiers].filter((s) => !s.startsWith('.'))).toEqual([]);
    expect([...files].filter((f) => f.includes('/server/'))).toEqual([]);
  });

  it('herdless/server imports no Node.js module either (node:http appears in types only, spelled out)', () => {
    const { specifiers } = graph(resolve(src, 'server/index.ts'));
    expect([...specifiers].filter((s) => !s.startsWith('.'))).toEqual([]);
  });
});
