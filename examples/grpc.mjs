// gRPC with grpc-js: herdless retries a call as a gRPC service config says (gRFC A6). The server
// answers UNAVAILABLE twice, then OK; then it asks for a 300 ms pause with grpc-retry-pushback-ms;
// then it fails with INVALID_ARGUMENT, which is never retried.
import { Buffer } from 'node:buffer';
import * as grpc from '@grpc/grpc-js';
import { grpcRetryInterceptor } from 'herdless/grpc-js';

// A tiny service without a .proto file: JSON messages.
const json = { serialize: (v) => Buffer.from(JSON.stringify(v)), deserialize: (b) => JSON.parse(b.toString()) };
const service = {
  sayHello: {
    path: '/helloworld.Greeter/SayHello',
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};

// The server: per request name, a script of answers.
const scripts = {
  flaky: ['UNAVAILABLE', 'UNAVAILABLE', 'OK'],
  pushback: ['PUSHBACK', 'OK'],
  invalid: ['INVALID_ARGUMENT'],
};
const seen = new Map();
const server = new grpc.Server();
server.addService(service, {
  sayHello: (call, callback) => {
    const { name } = call.request;
    const n = seen.get(name) ?? 0;
    seen.set(name, n + 1);
    const answer = scripts[name][Math.min(n, scripts[name].length - 1)];
    if (answer === 'OK') return callback(null, { message: `hello ${name}` });
    const metadata = new grpc.Metadata();
    if (answer === 'PUSHBACK') metadata.set('grpc-retry-pushback-ms', '300');
    const code = answer === 'INVALID_ARGUMENT' ? grpc.status.INVALID_ARGUMENT : grpc.status.UNAVAILABLE;
    callback({ code, details: answer.toLowerCase(), metadata });
  },
});
const port = await new Promise((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
);

// The client: A6's example retry policy, and a retryThrottling bucket for the server.
const serviceConfig = {
  methodConfig: [
    {
      name: [{ service: 'helloworld.Greeter' }],
      retryPolicy: { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] },
    },
  ],
  retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
};
const target = `127.0.0.1:${port}`;
const waits = [];
const Greeter = grpc.makeGenericClientConstructor(service, 'Greeter');
const client = new Greeter(target, grpc.credentials.createInsecure(), {
  'grpc.enable_retries': 0, // herdless retries: grpc-js's own retries stay off
  interceptors: [grpcRetryInterceptor({ target, serviceConfig, onRetry: (e) => waits.push(e) })],
});
const sayHello = (name) =>
  new Promise((resolve) => client.sayHello({ name }, (error, reply) => resolve(error ? `${grpc.status[error.code]}` : reply.message)));

for (const name of ['flaky', 'pushback', 'invalid']) {
  waits.length = 0;
  const result = await sayHello(name);
  const how = waits.map((w) => `${Math.round(w.delayMs)} ms${w.delaySource === 'pushback' ? ' (pushback)' : ''}`).join(', ');
  console.log(`${name}: ${result} after ${seen.get(name)} attempt${seen.get(name) === 1 ? "" : "s"}${how ? `; waits ${how}` : ''}`);
}
client.close();
server.forceShutdown();
