/**
 * A real Connect server (connect-node over HTTP/2 cleartext, on 127.0.0.1 and an ephemeral port)
 * for the Connect interceptor's tests. It serves the Connect, gRPC and gRPC-web protocols at once.
 * The service is described by a hand-written descriptor (no codegen): `test.Flaky/Unary` takes and
 * returns a `google.protobuf.StringValue` whose text is JSON — a request's `{ id, script }`, and
 * each attempt of an `id` gets the script's next outcome, as in grpc-server.ts.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, createFileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, file_google_protobuf_wrappers } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { Arrival, Request } from './grpc-server.js';

const file = create(FileDescriptorProtoSchema, {
  name: 'test/flaky.proto',
  package: 'test',
  syntax: 'proto3',
  dependency: ['google/protobuf/wrappers.proto'],
  service: [
    {
      name: 'Flaky',
      method: [{ name: 'Unary', inputType: '.google.protobuf.StringValue', outputType: '.google.protobuf.StringValue' }],
    },
  ],
});
const registry = createFileRegistry(file, (name) => (name === 'google/protobuf/wrappers.proto' ? file_google_protobuf_wrappers : undefined));

/** The `test.Flaky` service descriptor. */
export const FlakyService = registry.getService('test.Flaky')!;

export interface ConnectFlakyServer {
  readonly baseUrl: string;
  readonly arrivals: Arrival[];
  close(): Promise<void>;
}

/** Starts the server; `http1: true` serves HTTP/1.1 (node:http) instead, for fetch-based transports such as connect-web's. */
export async function startConnectServer(options: { http1?: boolean } = {}): Promise<ConnectFlakyServer> {
  const arrivals: Arrival[] = [];
  const counts = new Map<string, number>();
  const routes = (router: ConnectRouter): void => {
    router.service(FlakyService, {
      unary(req: { value: string }, context: { requestHeader: Headers; timeoutMs(): number | undefined }) {
        const { id, script } = JSON.parse(req.value) as Request;
        const n = counts.get(id) ?? 0;
        counts.set(id, n + 1);
        arrivals.push({ id, method: 'unary', previous: context.requestHeader.get('grpc-previous-rpc-attempts') ?? '', at: performance.now(), timeoutMs: context.timeoutMs() });
        const outcome = script[Math.min(n, script.length - 1)]!;
        if ('ok' in outcome) return { value: JSON.stringify({ ok: true, attempt: n + 1 }) };
        if ('code' in outcome) {
          const metadata = outcome.pushback === undefined ? undefined : { 'grpc-retry-pushback-ms': outcome.pushback };
          throw new ConnectError(`scripted ${Code[outcome.code]}`, outcome.code as Code, metadata);
        }
        throw new ConnectError('not a unary outcome', Code.Internal);
      },
    } as never);
  };
  const server = options.http1 === true ? http.createServer(connectNodeAdapter({ routes })) : http2.createServer(connectNodeAdapter({ routes }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        if (server instanceof http.Server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
