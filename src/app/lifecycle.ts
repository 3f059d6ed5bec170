/**
 * What start-up has started, undone newest first: the one clean-up path of an app, whether its
 * start-up fails half-way or it closes. Each part registers how to close itself right after it
 * started; buildApp closes what was registered when a later part fails, and when the app closes.
 */
export class Lifecycle {
  readonly #closers: (() => unknown)[] = [];

  /** Registers what undoes a start that succeeded. */
  add(close: () => unknown): void {
    this.#closers.push(close);
  }

  /** Closes everything registered, newest first; every close runs even when one fails; rejects with the first failure. */
  async close(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (let close = this.#closers.pop(); close !== undefined; close = this.#closers.pop()) {
      try {
        await close();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }
}
