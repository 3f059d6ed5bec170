import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A local SMTP server keeping every message it is sent. */
export interface SmtpSink {
  readonly url: string;
  readonly messages: ParsedMail[];
  /** The messages sent to `to` so far. */
  to(address: string): ParsedMail[];
  close(): Promise<void>;
}

export async function smtpSink(): Promise<SmtpSink> {
  const messages: ParsedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push(parsed);
          callback();
        })
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

/** The token of the last link to `path` (`verify-email`, `reset-password`) in `messages`, or undefined. */
export function lastLinkToken(messages: readonly ParsedMail[], path: string): string | undefined {
  const text = messages.at(-1)?.text ?? '';
  return new RegExp(`/v1/auth/${path}\\?token=([A-Za-z0-9_.-]+)`).exec(text)?.[1];
}
