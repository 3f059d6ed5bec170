/** The start of the stand-in a shared result leaves in a message (a string no result produces at the top). */
const MARK = '\u0000restgraph-shared-result:';

/**
 * A subscription group's result is the same for each of its members (SubscriptionGroups), so its
 * JSON text is made once, and each member's graphql-ws message carries that text. graphql-ws
 * writes a message with `JSON.stringify(message, replacer)`: this replacer leaves a numbered
 * stand-in for a shared payload (so only the small envelope `{id, type, payload}` is stringified
 * per member), and the socket's send, which graphql-ws calls at once with that string, puts the
 * text in its place. A message without the stand-in goes as it is.
 */
export class SharedPayloads {
  readonly #textOf: (value: unknown) => string | undefined;
  #sequence = 0;
  #pending: { stand: string; text: string } | undefined;

  /** `textOf`: the JSON text of a shared result, undefined for anything else. */
  constructor(textOf: (value: unknown) => string | undefined) {
    this.#textOf = textOf;
  }

  /** graphql-ws's `jsonMessageReplacer`. */
  readonly replacer = (key: string, value: unknown): unknown => {
    if (key !== 'payload') return value;
    const text = this.#textOf(value);
    if (text === undefined) return value;
    const stand = `${MARK}${String(++this.#sequence)}`;
    this.#pending = { stand, text };
    return stand;
  };

  /** The message as it goes on the wire: the shared text in place of its stand-in. */
  substitute(data: string): string {
    const pending = this.#pending;
    if (pending === undefined) return data;
    this.#pending = undefined;
    // JSON.stringify escapes the stand-in's NUL as \u0000.
    const quoted = JSON.stringify(pending.stand);
    const at = data.lastIndexOf(quoted);
    if (at < 0) return data;
    return data.slice(0, at) + pending.text + data.slice(at + quoted.length);
  }
}
