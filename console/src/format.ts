/** How values are shown in tables and lists. */

/** JSON on one line, cut at `max` characters. */
export function compactJson(value: unknown, max = 80): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A server time (ISO 8601, UTC) shown shorter: `2026-11-26 08:03:36Z`. */
export function shortTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** An ISO datetime as a `datetime-local` input's value (the browser's time zone). */
export function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** A `datetime-local` input's value (the browser's time zone) as ISO 8601 UTC. */
export function fromLocalInput(value: string): string {
  return new Date(value).toISOString();
}
