/**
 * @internal A priority queue of events in continuous virtual time: the earliest time first, and
 * events at the same instant in the order they were scheduled (a sequence number breaks ties, as
 * SimPy's heap does). A binary heap over parallel arrays: the simulator's inner loop pushes and pops
 * millions of events, so each costs no allocation once the arrays have grown.
 */
export class EventQueue<T> {
  private times: number[] = [];
  private seqs: number[] = [];
  private items: T[] = [];
  private next = 0;

  /** Events waiting. */
  get size(): number {
    return this.times.length;
  }

  /** The time of the earliest event; Infinity when empty. */
  peekTime(): number {
    return this.times.length === 0 ? Infinity : this.times[0]!;
  }

  /** Schedules `item` at `time`, after every event already scheduled at that same time. */
  push(time: number, item: T): void {
    const times = this.times;
    const seqs = this.seqs;
    const items = this.items;
    const seq = this.next++;
    let i = times.length;
    times.push(time);
    seqs.push(seq);
    items.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(time, seq, times[parent]!, seqs[parent]!)) break;
      times[i] = times[parent]!;
      seqs[i] = seqs[parent]!;
      items[i] = items[parent]!;
      i = parent;
    }
    times[i] = time;
    seqs[i] = seq;
    items[i] = item;
  }

  /** Removes the earliest event and returns it; its time is {@link lastTime}. @throws RangeError when empty. */
  pop(): T {
    const times = this.times;
    const seqs = this.seqs;
    const items = this.items;
    if (times.length === 0) throw new RangeError('EventQueue.pop: the queue is empty');
    const top = items[0]!;
    this.lastTime = times[0]!;
    const time = times.pop()!;
    const seq = seqs.pop()!;
    const item = items.pop()!;
    const n = times.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && before(times[r]!, seqs[r]!, times[l]!, seqs[l]!) ? r : l;
        if (!before(times[c]!, seqs[c]!, time, seq)) break;
        times[i] = times[c]!;
        seqs[i] = seqs[c]!;
        items[i] = items[c]!;
        i = c;
      }
      times[i] = time;
      seqs[i] = seq;
      items[i] = item;
    }
    return top;
  }

  /** The time of the event {@link pop} returned last (0 before the first pop). */
  lastTime = 0;
}

function before(t1: number, s1: number, t2: number, s2: number): boolean {
  return t1 < t2 || (t1 === t2 && s1 < s2);
}
