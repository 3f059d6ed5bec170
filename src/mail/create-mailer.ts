import type { Mailer } from '../core/mailer.js';
import { ConfigError } from '../errors.js';
import { LogMailer, UnconfiguredMailer } from './log-mailer.js';
import type { MailLog } from './mail-log.js';
import { MailTemplates } from './mail-templates.js';
import { SmtpMailer } from './smtp-mailer.js';

/** Email for accounts (docs/email.md). */
export interface MailOptions {
  /** `smtp://user:password@host:587` or `smtps://…` (`RESTGRAPH_SMTP_URL`). @default none: see `logWhenUnconfigured` */
  smtpUrl: string | undefined;
  /** The From of every message, `name <address>` or an address (`RESTGRAPH_MAIL_FROM`); needed with `smtpUrl`. @default none */
  from: string | undefined;
  /** A folder whose templates replace the shipped ones (`RESTGRAPH_MAIL_TEMPLATES`). @default none: templates/mail/ of the package */
  templatesDir: string | undefined;
  /**
   * Without `smtpUrl`: write each message and its link to the log (true), or refuse to send
   * (false: `503 email-not-configured`). @default true, false when `NODE_ENV=production`
   */
  logWhenUnconfigured: boolean;
}

/**
 * The mailer of these options: SMTP when a URL is set, else the log (development) or none
 * (production). The templates are read and checked here, at start-up; the SMTP server is first
 * contacted when a message is sent (a mail server that is away does not stop the API).
 *
 * @throws ConfigError for a bad URL, a missing From, or templates that cannot be used.
 */
export function createMailer(options: MailOptions, log: MailLog): Mailer {
  const templates = MailTemplates.load(options.templatesDir);
  if (options.smtpUrl === undefined) return options.logWhenUnconfigured ? new LogMailer(templates, log) : new UnconfiguredMailer();
  if (!/^smtps?:\/\/[^/\s]/.test(options.smtpUrl)) throw new ConfigError('RESTGRAPH_SMTP_URL', 'must be an smtp:// or smtps:// URL');
  if (options.from === undefined || options.from.trim() === '') throw new ConfigError('RESTGRAPH_MAIL_FROM', 'is needed with RESTGRAPH_SMTP_URL: the address messages come from');
  return new SmtpMailer(options.smtpUrl, options.from, templates, log);
}
