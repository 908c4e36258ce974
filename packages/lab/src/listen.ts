import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from './usage-error.js';

/** The only address the lab's servers listen on: loopback. */
export const HOST = '127.0.0.1';

/**
 * Listens on 127.0.0.1:`port` (0 picks a free port) and resolves with the port taken.
 * @throws UsageError `--port N: …` when the port is taken or not allowed.
 */
export function listenLoopback(server: Server, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new UsageError(`--port ${port}: already in use (try another, or 0 for any free port)`));
      else if (error.code === 'EACCES') reject(new UsageError(`--port ${port}: not allowed for this user (try a port above 1023)`));
      else reject(error);
    });
    server.listen(port, HOST, () => resolve((server.address() as AddressInfo).port));
  });
}
