/** Real node:http servers for tests: 127.0.0.1, an ephemeral port, closed with every connection. */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `listener` on 127.0.0.1:0; resolves with the server and its `http://127.0.0.1:<port>` origin. */
export async function startLoopback(listener: http.RequestListener): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Closes `server` and every connection it holds. */
export async function stopLoopback(server: http.Server): Promise<void> {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
}
