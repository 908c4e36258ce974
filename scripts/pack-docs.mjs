// Before `npm pack` / `npm publish` of the library: copy the user guides (docs/*.md) and the
// changelog into the package, so that the package README's links work from the tarball and on the
// npm page. The copies are build output (git-ignored), made anew each time.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = join(root, 'packages', 'herdless');
const target = join(pkg, 'docs');
rmSync(target, { recursive: true, force: true });
mkdirSync(target);
for (const file of readdirSync(join(root, 'docs'))) {
  if (file.endsWith('.md')) copyFileSync(join(root, 'docs', file), join(target, file));
}
copyFileSync(join(root, 'CHANGELOG.md'), join(pkg, 'CHANGELOG.md'));
