// retry() around any async operation: transient failures are retried with full jitter; a fatal
// one ends the call at once; a RetryError says why the call stopped.
import { retry, isRetryError } from 'herdless';

// A flaky dependency: the first two calls fail with a connection reset, then it answers.
let calls = 0;
async function readStock(sku) {
  calls += 1;
  if (calls <= 2) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
  return { sku, stock: 7 };
}

const stock = await retry(() => readStock('A-1'), { maxAttempts: 3, deadlineMs: 5_000 });
console.log(`stock ${stock.stock} after ${calls} attempts`);

// A 400-style error is not transient: no retry.
try {
  await retry(async () => { throw Object.assign(new Error('bad request'), { status: 400 }); }, { maxAttempts: 5 });
} catch (error) {
  if (!isRetryError(error)) throw error;
  console.log(`gave up: reason ${error.reason}, attempts ${error.attempts}`);
}
