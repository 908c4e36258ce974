import type { Message } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { StreamRequest, StreamResponse } from '@connectrpc/connect';
import type { GrpcRetryPlanner } from '../grpc/interceptor-options.js';
import { HEADERS_COMMIT, MESSAGE_COMMIT, overflowReason, sizeOf, type ConnectCall } from './connect-call.js';
import { ReplaySource } from './replay.js';

/** Whether a committed stream's outcome has been reported (once: by its end, or by the call's end). */
interface Settlement {
  settled: boolean;
}

/**
 * The response stream handed to the caller once the call is committed: the first message (already
 * read, when the commit was its arrival), then the rest; the end reports the call's outcome.
 */
async function* committedStream<O>(call: ConnectCall, first: IteratorResult<O> | undefined, rest: AsyncIterator<O>, done: Settlement): AsyncGenerator<O> {
  let result = first;
  try {
    result ??= await rest.next();
    while (result.done !== true) {
      yield result.value;
      result = await rest.next();
    }
  } catch (error) {
    if (!done.settled) call.retry.gaveUp(ConnectError.from(error).code, 'committed', call.committed ?? MESSAGE_COMMIT);
    done.settled = true;
    throw error;
  }
  if (!done.settled) call.retry.succeeded();
  done.settled = true;
}

/** @internal A streaming call (server, client or bidi): its attempts, until one commits. */
export async function streamCall(call: ConnectCall, req: StreamRequest, next: (req: StreamRequest) => Promise<StreamResponse>, planner: GrpcRetryPlanner): Promise<StreamResponse> {
  const schema = req.method.input;
  const replay = new ReplaySource<Message>(req.message, call.buffer, (m) => sizeOf(schema, m), () => {
    call.committed ??= overflowReason(planner);
  });
  const done: Settlement = { settled: false };
  let handedOver = false;
  // Connect aborts the call's signal when the call ends, however it ends — also when the caller
  // stops reading and the response stream is never read to its end: the buffer is given back then.
  const onEnd = (): void => {
    replay.close();
    if (handedOver && !done.settled) call.retry.gaveUp(Code.Canceled, 'aborted', 'the call ended before its response was read to the end');
    done.settled = true;
  };
  if (req.signal.aborted) onEnd();
  else req.signal.addEventListener('abort', onEnd, { once: true });
  // gRPC and gRPC-web send a failure before the response has begun as trailers-only: the transport
  // then rejects, and response headers are A6's commit. The Connect protocol always sends headers
  // first (the status comes at the end of the body), so there the commit is the first message.
  const headersCommit = /^application\/grpc/i.test(req.header.get('content-type') ?? '');
  try {
    for (;;) {
      const header = call.header();
      let res: StreamResponse;
      let first: IteratorResult<Message> | undefined;
      let rest: AsyncIterator<Message>;
      try {
        res = await call.send(() => next({ ...req, header, message: replay.attempt() }));
        rest = res.message[Symbol.asyncIterator]();
        if (!headersCommit) first = await rest.next();
      } catch (error) {
        await call.failed(error);
        continue;
      }
      call.committed ??= headersCommit ? HEADERS_COMMIT : MESSAGE_COMMIT;
      call.answered(res);
      replay.commit();
      handedOver = true;
      return { ...res, message: committedStream(call, first, rest, done) };
    }
  } catch (error) {
    replay.close();
    throw error;
  }
}

