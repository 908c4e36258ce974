// The loopback server of the adapter benchmark, in a process of its own so that the client's CPU
// time (the measuring process's) counts no server work. Answers every request 200 "ok", keep-alive.
// Prints its port, then serves until its parent closes stdin.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok'));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.stdin.on('end', () => {
  server.closeAllConnections();
  server.close();
});
process.stdin.resume();
