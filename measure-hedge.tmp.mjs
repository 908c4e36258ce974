import * as grpc from '@grpc/grpc-js';
import { grpcRetryInterceptor } from './packages/herdless/dist/grpc-js/index.js';
const json = { serialize: (v) => Buffer.from(JSON.stringify(v)), deserialize: (b) => JSON.parse(b.toString()) };
const def = (path, rs) => ({ path, requestStream: false, responseStream: rs, requestSerialize: json.serialize, requestDeserialize: json.deserialize, responseSerialize: json.serialize, responseDeserialize: json.deserialize });
const service = { unary: def('/test.Hedged/Unary', false), stream: def('/test.Hedged/Stream', true) };
const Client = grpc.makeGenericClientConstructor(service, 'Hedged');
const arrivals = new Map();
const server = new grpc.Server();
const seen = (call) => { const a = arrivals.get(call.request.id) ?? []; a.push(performance.now()); arrivals.set(call.request.id, a); return a.length; };
server.addService(service, {
  unary: (call, cb) => { if (seen(call) > 1 || call.request.warm) cb(null, { ok: 1 }); },
  stream: (call) => { if (seen(call) > 1) { call.write({ p: 1 }); call.write({ p: 2 }); call.end(); } },
});
const port = await new Promise((r, j) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? j(e) : r(p))));
const target = `127.0.0.1:${port}`;
const serviceConfig = { methodConfig: [{ name: [{ service: 'test.Hedged' }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.2s', nonFatalStatusCodes: ['UNAVAILABLE'] } }] };
const clients = {
  herdless: new Client(target, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0, interceptors: [grpcRetryInterceptor({ serviceConfig, target })] }),
  'grpc-js': new Client(target, grpc.credentials.createInsecure(), { 'grpc.service_config': JSON.stringify(serviceConfig) }),
};
let n = 0;
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
for (const [name, c] of Object.entries(clients)) {
  await new Promise((r) => c.unary({ id: `w${name}`, warm: true }, r));
  for (const kind of ['unary', 'stream']) {
    const gaps = [], total = [];
    for (let i = 0; i < 20; i++) {
      const id = `${name}-${kind}-${++n}`;
      const t0 = performance.now();
      await new Promise((resolve) => {
        if (kind === 'unary') c.unary({ id }, { deadline: Date.now() + 5000 }, resolve);
        else { const s = c.stream({ id }, { deadline: Date.now() + 5000 }); s.on('data', () => {}); s.on('error', () => {}); s.on('status', resolve); }
      });
      total.push(performance.now() - t0);
      const a = arrivals.get(id); gaps.push(a[1] - a[0]);
    }
    console.log(`${name} ${kind}: server gap min ${q(gaps, 0).toFixed(1)} median ${q(gaps, 0.5).toFixed(1)} max ${q(gaps, 1).toFixed(1)} ms; call median ${q(total, 0.5).toFixed(1)} max ${q(total, 1).toFixed(1)} ms`);
  }
}
for (const c of Object.values(clients)) c.close();
server.forceShutdown();
