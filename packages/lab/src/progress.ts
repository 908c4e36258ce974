import cliProgress from 'cli-progress';

/**
 * A progress bar on stderr for runs longer than a second, shown only when stderr is a terminal
 * (pipes and CI logs stay clean). Returns the progress callback and a `stop` to call at the end.
 */
export function progressBar(label: string): { update: (done: number, total: number) => void; stop: () => void } {
  if (!process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const started = Date.now();
  let bar: cliProgress.SingleBar | undefined;
  return {
    update(done, total) {
      if (!bar && Date.now() - started > 1000 && done < total) {
        bar = new cliProgress.SingleBar(
          { stream: process.stderr, format: `${label} [{bar}] {value}/{total} runs, {eta_formatted} left`, clearOnComplete: true, hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, done);
      }
      bar?.update(done);
    },
    stop() {
      bar?.stop();
    },
  };
}
