import type { RejectedRow } from '../errors.js';

/** Rejected rows an import reports in full; past this, only how many more. */
export const REPORTED_REJECTIONS = 1000;

/**
 * The rows an import rejected: the first {@link REPORTED_REJECTIONS} by line kept to report,
 * every one counted (a file of a million bad rows does not make a list of a million).
 */
export class RejectedRows {
  #rows: RejectedRow[] = [];
  #count = 0;

  add(row: RejectedRow): void {
    this.#count++;
    this.#rows.push(row);
    if (this.#rows.length >= 2 * REPORTED_REJECTIONS) this.#rows = this.#sorted();
  }

  get count(): number {
    return this.#count;
  }

  /** The rows kept, by line. */
  get rows(): RejectedRow[] {
    this.#rows = this.#sorted();
    return this.#rows;
  }

  #sorted(): RejectedRow[] {
    return this.#rows.sort((a, b) => a.line - b.line).slice(0, REPORTED_REJECTIONS);
  }
}

/** A value as a rejection names it (long texts cut short). */
export function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
