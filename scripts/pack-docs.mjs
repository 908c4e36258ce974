// Before `npm pack` / `npm publish` of the library: copy the user guides (docs/*.md) and the
// changelog into the package, so that the package README's links work from the tarball and on the
// npm page. The copies are build output (git-ignored), made anew each time.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = join(root, 'packages', 'herdless');
const target = join(pkg, 'docs');
rmSync(target, { recursive: true, force: true });
mkdirSync(target);
// Maintainers' pages stay in the repository: a user of the package does not read them.
const MAINTAINER_DOCS = new Set(['testing.md']);
for (const file of readdirSync(join(root, 'docs'))) {
  if (file.endsWith('.md') && !MAINTAINER_DOCS.has(file)) copyFileSync(join(root, 'docs', file), join(target, file));
}
copyFileSync(join(root, 'CHANGELOG.md'), join(pkg, 'CHANGELOG.md'));

// A guide's link or image that points at a file the package does not ship (`../BENCHMARKS.md`,
// `../examples/…`, the screenshots) becomes plain text in the tarball that says where the file is.
// Links that resolve inside the package (`../CHANGELOG.md`, `breaker.md`) stay.
for (const file of readdirSync(target)) {
  const path = join(target, file);
  const text = readFileSync(path, 'utf8');
  const packed = text.replace(/(!?)\[([^\]]*)\]\(([^)#\s]+)(#[^)\s]*)?\)/g, (link, image, label, to) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(to) || existsSync(join(target, to))) return link;
    const inRepo = relative(root, resolve(root, 'docs', to)).split(sep).join('/');
    return image === '!' ? `(${label}: an image in the herdless repository, ${inRepo})` : `${label} (in the herdless repository)`;
  });
  if (packed !== text) writeFileSync(path, packed);
}
