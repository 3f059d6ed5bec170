/** What the mailers write to the log: the app's pino logger has these (and more). */
export interface MailLog {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
