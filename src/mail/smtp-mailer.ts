import nodemailer, { type Transporter } from 'nodemailer';
import type { Mailer, MailRequest } from '../core/mailer.js';
import { EmailUnavailableError } from '../errors.js';
import type { MailLog } from './mail-log.js';
import type { MailTemplates } from './mail-templates.js';

/** How long the SMTP server may take: to accept the connection, to greet, to answer a command. */
const SMTP_TIMEOUTS = Object.freeze({
  connectionTimeout: 10_000, // 10 s
  greetingTimeout: 10_000, // 10 s
  socketTimeout: 30_000, // 30 s
});

/** Delivers messages through the SMTP server of `RESTGRAPH_SMTP_URL`, with nodemailer. */
export class SmtpMailer implements Mailer {
  readonly delivery = 'smtp';
  readonly #transport: Transporter;
  readonly #from: string;
  readonly #templates: MailTemplates;
  readonly #log: MailLog;

  /** `url`: `smtp://user:password@host:587` (STARTTLS when offered) or `smtps://…:465` (TLS from the start). */
  constructor(url: string, from: string, templates: MailTemplates, log: MailLog) {
    this.#transport = nodemailer.createTransport({ url, ...SMTP_TIMEOUTS });
    this.#from = from;
    this.#templates = templates;
    this.#log = log;
  }

  assertConfigured(): void {
    // Configured: whether the server takes a message is known only by sending one.
  }

  async send(request: MailRequest): Promise<void> {
    const message = this.#templates.render(request);
    try {
      await this.#transport.sendMail({
        from: this.#from,
        to: request.to,
        subject: message.subject,
        text: message.text,
        ...(message.html === undefined ? {} : { html: message.html }),
      });
    } catch (error) {
      // The SMTP server's answer is for the operator; the client learns only that it failed.
      this.#log.error({ err: error, template: request.template }, 'sending an email failed');
      throw new EmailUnavailableError('The email could not be sent just now; try again later.', { cause: error });
    }
  }

  close(): Promise<void> {
    this.#transport.close();
    return Promise.resolve();
  }
}
