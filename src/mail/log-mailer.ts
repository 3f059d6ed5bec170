import type { Mailer, MailRequest } from '../core/mailer.js';
import { EmailNotConfiguredError } from '../errors.js';
import type { MailLog } from './mail-log.js';
import type { MailTemplates } from './mail-templates.js';

/**
 * Development without SMTP: each message, with its link, is written to the log instead of sent,
 * so sign-up and password reset can be tried before a mail server is set up. Never in production:
 * the links are credentials (whoever reads the log could use them).
 */
export class LogMailer implements Mailer {
  readonly delivery = 'log';
  readonly #templates: MailTemplates;
  readonly #log: MailLog;

  constructor(templates: MailTemplates, log: MailLog) {
    this.#templates = templates;
    this.#log = log;
  }

  assertConfigured(): void {
    // Development: the log is where messages go.
  }

  send(request: MailRequest): Promise<void> {
    const message = this.#templates.render(request);
    this.#log.warn(
      { mail: { template: request.template, to: request.to, subject: message.subject, link: request.link, text: message.text } },
      `email not configured (RESTGRAPH_SMTP_URL): "${message.subject}" to ${request.to} is written here instead; its link: ${request.link}`,
    );
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Production without SMTP: nothing can be sent, and every attempt says so (a 503 for clients). */
export class UnconfiguredMailer implements Mailer {
  readonly delivery = 'none';

  assertConfigured(): void {
    throw new EmailNotConfiguredError();
  }

  send(_request: MailRequest): Promise<void> {
    return Promise.reject(new EmailNotConfiguredError());
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
