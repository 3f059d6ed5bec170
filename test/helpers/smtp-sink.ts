import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A local SMTP server that keeps every message it is sent (for the account email tests). */
export interface SmtpSink {
  readonly url: string;
  readonly messages: ParsedMail[];
  /** The messages sent to `to` so far. */
  to(address: string): ParsedMail[];
  close(): Promise<void>;
}

/** Starts a local SMTP sink on a free port of 127.0.0.1; it takes each message `delayMs` after its data arrives. */
export async function smtpSink(delayMs = 0): Promise<SmtpSink> {
  const messages: ParsedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) =>
          setTimeout(() => {
            messages.push(parsed);
            callback();
          }, delayMs),
        )
        .catch((error: unknown) => callback(error as Error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: (address) => messages.filter((m) => (Array.isArray(m.to) ? m.to : [m.to]).some((a) => a?.value.some((v) => v.address === address))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token of the `<publicUrl>/v1/auth/<path>?token=…` link in `text`, or undefined. */
export function linkToken(text: string, publicUrl: string, path: 'verify-email' | 'reset-password'): string | undefined {
  const escaped = publicUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`${escaped}/v1/auth/${path}\\?token=([0-9]+\\.[A-Za-z0-9_-]{43})`).exec(text)?.[1];
}

/** The token of the last link to `path` (`verify-email`, `reset-password`) in `messages`, or undefined. */
export function lastLinkToken(messages: readonly ParsedMail[], path: string): string | undefined {
  const text = messages.at(-1)?.text ?? '';
  return new RegExp(`/v1/auth/${path}\\?token=([A-Za-z0-9_.-]+)`).exec(text)?.[1];
}
