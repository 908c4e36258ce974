import { existsSync } from 'node:fs';
import type { Reporter } from 'vitest/reporters';

/**
 * Says, as the very last line of a local run, that the browser suite did not run when Debian's
 * chromium is missing: a green run must not hide a skipped suite. (Under CI=true the browser test
 * fails instead of skipping, so this stays silent there.)
 */
export default class BrowserSkipReporter implements Reporter {
  onTestRunEnd(): void {
    if (!existsSync('/usr/bin/chromium') && !process.env.CI) {
      process.stdout.write('\n\x1b[33mNOTE: the browser suite (packages/lab/test/page.browser.test.ts) did NOT run: /usr/bin/chromium is missing (apt-get install chromium).\x1b[0m\n');
    }
  }
}
