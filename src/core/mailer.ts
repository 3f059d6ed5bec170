/**
 * The emails accounts need, as a port: the core says which message goes to whom with which link;
 * an adapter (src/mail/) renders its template and delivers it by SMTP, writes it to the log in
 * development, or refuses when email is not configured. docs/email.md.
 */

/** The messages restgraph sends to an account's mailbox, one template each (`<name>.txt`, `<name>.html`). */
export type MailTemplateName = 'verify-email' | 'reset-password' | 'account-exists';

/** `account-exists`: someone tried to sign up with the address of an account (`accounts.emailVerification: required`); its link is a password reset's. */
export const MAIL_TEMPLATE_NAMES: readonly MailTemplateName[] = Object.freeze(['verify-email', 'reset-password', 'account-exists']);

/** One message to send: its template and the values its `{{placeholders}}` take. */
export interface MailRequest {
  readonly template: MailTemplateName;
  /** The recipient's address (also the template's `{{email}}`). */
  readonly to: string;
  /** The link with the one-time token (`{{link}}`). */
  readonly link: string;
  /** How long the link works, in whole minutes (`{{expiresInMinutes}}`). */
  readonly expiresInMinutes: number;
}

/** The placeholders every template may use: the values of a {@link MailRequest}. */
export const MAIL_PLACEHOLDERS: readonly string[] = Object.freeze(['email', 'link', 'expiresInMinutes']);

export interface Mailer {
  /**
   * How messages leave: `smtp` (to the recipient's mailbox), `log` (development without SMTP: the
   * message and its link go to the log) or `none` (production without SMTP: {@link send} refuses).
   */
  readonly delivery: 'smtp' | 'log' | 'none';
  /**
   * Throws EmailNotConfiguredError when messages cannot be sent at all (`delivery` is `none`), so
   * an endpoint can answer its 503 before doing any work (issuing a token, counting a request).
   */
  assertConfigured(): void;
  /**
   * Renders and sends one message; resolves once the SMTP server has taken it (or it is logged).
   *
   * @throws EmailNotConfiguredError when `delivery` is `none`; EmailUnavailableError when the SMTP
   *   server refuses it or cannot be reached (its answer is logged, not shown to clients).
   */
  send(request: MailRequest): Promise<void>;
  /** Closes the SMTP connections. */
  close(): Promise<void>;
}
