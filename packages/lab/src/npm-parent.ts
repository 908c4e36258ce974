/**
 * Under npm (`npm run lab`, `npx herdless-lab`) the lab is the child of the shell npm starts the
 * script in. A SIGTERM to npm reaches that shell only: the shell ends without passing it on, and the
 * lab would run on, adopted by init, a server still holding its port. So the lab checks its parent
 * a few times a second and, once that changes (the shell is gone, so the run npm started is over),
 * ends as on SIGTERM: `serve` and `server` close their sockets and say so, any other command stops.
 *
 * Called only when npm started the lab (it sets `npm_lifecycle_event`): a lab started by hand keeps
 * running if its terminal's shell goes, as any program does.
 */
export function endWithNpmShell(): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    // `process.ppid` is read afresh each time: it becomes the adopting process once the shell ends.
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, 200);
  timer.unref(); // never what keeps the lab running
}
