/**
 * Delivery work, done in small steps, a bounded number per event-loop turn.
 *
 * An event may have thousands of listeners. Handing it to all of them at once, in the write that
 * committed it, would hold that write's response, and every request behind it, for as long as
 * the fan-out takes. Instead each fan-out is a task of small steps (one listener each), and the
 * queue runs at most `stepsPerTurn` of them in a turn, then lets the event loop serve I/O
 * (setImmediate) before the next. So the cost of many listeners lands on delivery latency, not on
 * request throughput. Tasks take turns, a step each (a long task does not hold up the others);
 * each task's own steps run in order.
 */
export class DeliveryQueue {
  readonly #stepsPerTurn: number;
  #tasks: Iterator<unknown>[] = [];
  /** The task whose turn it is. */
  #next = 0;
  #scheduled: NodeJS.Immediate | undefined;
  #idle: (() => void)[] = [];

  constructor(stepsPerTurn = 1000) {
    this.#stepsPerTurn = stepsPerTurn;
  }

  /** Adds a task: each `next()` is one step; it is done when it says so. */
  add(task: Iterator<unknown>): void {
    this.#tasks.push(task);
    this.#scheduled ??= setImmediate(() => this.#run());
  }

  /** Tasks waiting or under way. */
  get pending(): number {
    return this.#tasks.length;
  }

  /** Resolves once no task is left (tasks added meanwhile included). */
  drained(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Drops every task not done yet, ending each (a generator's `finally` runs). */
  clear(): void {
    const dropped = this.#tasks;
    this.#tasks = [];
    this.#next = 0;
    if (this.#scheduled !== undefined) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    for (const resolve of this.#idle.splice(0)) resolve();
    for (const task of dropped) {
      try {
        task.return?.();
      } catch {
        // Its clean-up failed: nothing more to do for it.
      }
    }
  }

  #run(): void {
    this.#scheduled = undefined;
    for (let budget = this.#stepsPerTurn; budget > 0 && this.#tasks.length > 0; budget--) {
      if (this.#next >= this.#tasks.length) this.#next = 0;
      const task = this.#tasks[this.#next] as Iterator<unknown>;
      let done: boolean | undefined;
      try {
        done = task.next().done;
      } catch {
        // A task that throws is over; the others go on (each guards its own listeners).
        done = true;
      }
      if (done === true) this.#tasks.splice(this.#next, 1);
      else this.#next++;
    }
    if (this.#tasks.length === 0) {
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#scheduled = setImmediate(() => this.#run());
  }
}
