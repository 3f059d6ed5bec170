import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import Fastify from 'fastify';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { resolveOptions } from '../src/app/app-options.js';
import type { Mailer } from '../src/core/mailer.js';
import { ConfigError, EmailNotConfiguredError, EmailUnavailableError } from '../src/errors.js';
import { lingerLimits } from '../src/http/lingering-close.js';
import { registerProblemHandlers } from '../src/http/problem-details.js';
import { createMailer, type MailOptions } from '../src/mail/create-mailer.js';
import { captureLogs, tempDir } from './helpers/test-app.js';

/**
 * Email for accounts: messages rendered from their templates and delivered through SMTP (a local
 * SMTP sink reads them), written to the log in development without SMTP, refused in production
 * without it; templates replaced from a folder.
 */

interface Sink {
  readonly url: string;
  readonly messages: ParsedMail[];
  /** Envelope recipients of each message, in order. */
  readonly recipients: string[][];
  close(): Promise<void>;
}

/** A local SMTP server that keeps every message it is given (optionally refusing them, or asking a password). */
async function smtpSink(options: { refuse?: boolean; user?: string; password?: string } = {}): Promise<Sink> {
  const messages: ParsedMail[] = [];
  const recipients: string[][] = [];
  const server = new SMTPServer({
    disabledCommands: options.user === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: options.user === undefined,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          if (options.refuse === true) {
            const refusal = Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 });
            callback(refusal);
            return;
          }
          messages.push(parsed);
          recipients.push(session.envelope.rcptTo.map((r) => r.address));
          callback();
        })
        .catch((error: unknown) => callback(error as Error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const credentials = options.user === undefined ? '' : `${options.user}:${options.password ?? ''}@`;
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    messages,
    recipients,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const OFF: MailOptions = { smtpUrl: undefined, from: undefined, templatesDir: undefined, logWhenUnconfigured: false };

let sinks: Sink[];
let mailers: Mailer[];
let dir: ReturnType<typeof tempDir>;
let captured: ReturnType<typeof captureLogs>;

beforeEach(() => {
  sinks = [];
  mailers = [];
  dir = tempDir('restgraph-mail-');
  captured = captureLogs();
});

afterEach(async () => {
  for (const mailer of mailers) await mailer.close();
  for (const sink of sinks) await sink.close();
  dir.cleanup();
});

function mailer(options: Partial<MailOptions>): Mailer {
  const made = createMailer({ ...OFF, ...options }, pino({ level: 'info' }, captured.logDestination));
  mailers.push(made);
  return made;
}

async function sink(options: Parameters<typeof smtpSink>[0] = {}): Promise<Sink> {
  const made = await smtpSink(options);
  sinks.push(made);
  return made;
}

describe('email through SMTP', () => {
  it('delivers the verification message: From, To, subject, the link in the text and (escaped) in the HTML', async () => {
    const server = await sink();
    const smtp = mailer({ smtpUrl: server.url, from: 'My App <no-reply@app.test>' });
    expect(smtp.delivery).toBe('smtp');
    const link = 'https://app.test/verify?token=Zm9v_YmFy-&next=<home>"';
    await smtp.send({ template: 'verify-email', to: 'ada@example.test', link, expiresInMinutes: 1440 });

    expect(server.messages).toHaveLength(1);
    const [message] = server.messages;
    expect(server.recipients).toEqual([['ada@example.test']]);
    expect(message?.subject).toBe('Confirm your email address');
    expect(message?.from?.value).toEqual([{ name: 'My App', address: 'no-reply@app.test' }]);
    expect(message?.text).toContain(`\n${link}\n`);
    expect(message?.text).toContain('ada@example.test');
    expect(message?.text).toContain('for 1440 minutes');
    // In the HTML the link is escaped: it cannot end the attribute or open a tag.
    const html = typeof message?.html === 'string' ? message.html : '';
    expect(html).toContain('href="https://app.test/verify?token=Zm9v_YmFy-&amp;next=&lt;home&gt;&quot;"');
    expect(html).not.toContain('<home>');
  });

  it('delivers the reset message, logging in with the URL\'s user and password', async () => {
    const server = await sink({ user: 'mailer', password: 's3cret' });
    const smtp = mailer({ smtpUrl: server.url, from: 'no-reply@app.test' });
    await smtp.send({ template: 'reset-password', to: 'bob@example.test', link: 'https://app.test/reset#t=abc', expiresInMinutes: 60 });
    expect(server.messages.map((m) => m.subject)).toEqual(['Reset your password']);
    expect(server.messages[0]?.text).toContain('https://app.test/reset#t=abc');
  });

  it('a wrong SMTP password, a refused message and an unreachable server: email-unavailable (503), the reason in the log only', async () => {
    const locked = await sink({ user: 'mailer', password: 'right' });
    const wrongPassword = mailer({ smtpUrl: locked.url.replace(':right@', ':wrong@'), from: 'no-reply@app.test' });
    const refusing = await sink({ refuse: true });
    const refused = mailer({ smtpUrl: refusing.url, from: 'no-reply@app.test' });
    const away = await smtpSink();
    await away.close();
    const unreachable = mailer({ smtpUrl: away.url, from: 'no-reply@app.test' });

    const request = { template: 'verify-email', to: 'ada@example.test', link: 'https://app.test/v?t=1', expiresInMinutes: 10 } as const;
    for (const failing of [wrongPassword, refused, unreachable]) {
      const error = await failing.send(request).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(EmailUnavailableError);
      expect(error).toMatchObject({ status: 503, code: 'email-unavailable', message: 'The email could not be sent just now; try again later.' });
    }
    expect(locked.messages).toEqual([]);
    const failures = captured.logs.filter((line) => line.msg === 'sending an email failed');
    expect(failures).toHaveLength(3);
    expect(JSON.stringify(failures[1])).toContain('Mailbox unavailable');
  });
});

describe('email without SMTP', () => {
  it('in development: the message and its link are written to the log', async () => {
    const development = mailer({ logWhenUnconfigured: true });
    expect(development.delivery).toBe('log');
    expect(() => development.assertConfigured()).not.toThrow();
    await development.send({ template: 'reset-password', to: 'ada@example.test', link: 'https://app.test/reset?t=XYZ', expiresInMinutes: 30 });
    const line = captured.logs.find((l) => typeof l.mail === 'object');
    expect(line).toMatchObject({ level: 40, mail: { template: 'reset-password', to: 'ada@example.test', subject: 'Reset your password', link: 'https://app.test/reset?t=XYZ' } });
    expect(String(line?.msg)).toContain('https://app.test/reset?t=XYZ');
    expect((line?.mail as { text: string }).text).toContain('for 30 minutes');
  });

  it('in production: "email is not configured" (503 email-not-configured), before and at sending, and nothing logged', async () => {
    const production = mailer({ logWhenUnconfigured: false });
    expect(production.delivery).toBe('none');
    expect(() => production.assertConfigured()).toThrow(EmailNotConfiguredError);
    const error = await production.send({ template: 'verify-email', to: 'ada@example.test', link: 'https://app.test/v?t=1', expiresInMinutes: 10 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EmailNotConfiguredError);
    expect(error).toMatchObject({ status: 503, code: 'email-not-configured', title: 'Email not configured', message: 'This server cannot send email: RESTGRAPH_SMTP_URL is not set.' });
    expect(JSON.stringify(captured.logs)).not.toContain('https://app.test/v?t=1');
  });

  it('an endpoint that sends through it answers 503 problem+json email-not-configured (as the HTTP adapters turn errors into problems)', async () => {
    const production = mailer({ logWhenUnconfigured: false });
    const app = Fastify({ logger: false });
    registerProblemHandlers(app, lingerLimits(30_000));
    app.post('/v1/auth/forgot-password', async () => {
      production.assertConfigured();
      await production.send({ template: 'reset-password', to: 'ada@example.test', link: 'https://app.test/r', expiresInMinutes: 10 });
      return { sent: true };
    });
    try {
      const response = await app.inject({ method: 'POST', url: '/v1/auth/forgot-password' });
      expect(response.statusCode).toBe(503);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(response.body)).toMatchObject({
        type: 'urn:restgraph:problem:email-not-configured',
        title: 'Email not configured',
        status: 503,
        code: 'email-not-configured',
        detail: 'This server cannot send email: RESTGRAPH_SMTP_URL is not set.',
      });
    } finally {
      await app.close();
    }
  });

  it('logs only outside production by default', () => {
    expect(resolveOptions({}).mail.logWhenUnconfigured).toBe(process.env.NODE_ENV !== 'production');
    expect(resolveOptions({ mail: { logWhenUnconfigured: false } }).mail).toMatchObject({ smtpUrl: undefined, logWhenUnconfigured: false });
  });
});

describe('email templates', () => {
  it('a folder replaces the templates it holds; the others stay the shipped ones', async () => {
    const server = await sink();
    writeFileSync(join(dir.path, 'verify-email.txt'), 'Subject: Welcome to {{email}}!\n\nClick {{ link }} within {{expiresInMinutes}} min.\n');
    const smtp = mailer({ smtpUrl: server.url, from: 'no-reply@app.test', templatesDir: dir.path });
    await smtp.send({ template: 'verify-email', to: 'ada@example.test', link: 'https://app.test/v?t=1&u=2', expiresInMinutes: 5 });
    await smtp.send({ template: 'reset-password', to: 'ada@example.test', link: 'https://app.test/r', expiresInMinutes: 5 });
    const [custom, shipped] = server.messages;
    expect(custom?.subject).toBe('Welcome to ada@example.test!');
    expect(custom?.text).toBe('Click https://app.test/v?t=1&u=2 within 5 min.\n');
    // Its own template has no HTML: the shipped verify-email.html is not mixed in.
    expect(custom?.html).toBe(false);
    expect(shipped?.subject).toBe('Reset your password');
    expect(shipped?.html).toContain('href="https://app.test/r"');
  });

  it('an HTML template of the folder gets escaped values', async () => {
    const server = await sink();
    writeFileSync(join(dir.path, 'reset-password.txt'), 'Subject: Reset\n\n{{link}}\n');
    writeFileSync(join(dir.path, 'reset-password.html'), '<p>For {{email}}: <a href="{{link}}">reset</a></p>');
    const smtp = mailer({ smtpUrl: server.url, from: 'no-reply@app.test', templatesDir: dir.path });
    await smtp.send({ template: 'reset-password', to: "o'hara@example.test", link: 'https://app.test/r?a=1&b="2"', expiresInMinutes: 5 });
    expect(server.messages[0]?.html).toBe('<p>For o&#39;hara@example.test: <a href="https://app.test/r?a=1&amp;b=&quot;2&quot;">reset</a></p>');
    expect(server.messages[0]?.text).toBe('https://app.test/r?a=1&b="2"\n');
  });

  it('refuses at start-up: a missing folder, an unknown placeholder, no Subject line, an HTML template without its text', () => {
    expect(() => mailer({ templatesDir: join(dir.path, 'missing') })).toThrow(ConfigError);
    expect(() => mailer({ templatesDir: join(dir.path, 'missing') })).toThrow('is not a folder');

    const unknown = join(dir.path, 'unknown');
    mkdirSync(unknown);
    writeFileSync(join(unknown, 'verify-email.txt'), 'Subject: Hi {{name}}\n\n{{link}}\n');
    expect(() => mailer({ templatesDir: unknown })).toThrow(/verify-email\.txt uses \{\{name\}\}; the placeholders are \{\{email\}\}, \{\{link\}\}, \{\{expiresInMinutes\}\}/);

    const unknownHtml = join(dir.path, 'unknown-html');
    mkdirSync(unknownHtml);
    writeFileSync(join(unknownHtml, 'verify-email.txt'), 'Subject: Hi\n\n{{link}}\n');
    writeFileSync(join(unknownHtml, 'verify-email.html'), '<a href="{{url}}">x</a>');
    expect(() => mailer({ templatesDir: unknownHtml })).toThrow(/verify-email\.html uses \{\{url\}\}/);

    const noSubject = join(dir.path, 'no-subject');
    mkdirSync(noSubject);
    writeFileSync(join(noSubject, 'reset-password.txt'), 'Reset: {{link}}\n');
    expect(() => mailer({ templatesDir: noSubject })).toThrow(/reset-password\.txt must begin with a "Subject: …" line/);

    const htmlOnly = join(dir.path, 'html-only');
    mkdirSync(htmlOnly);
    writeFileSync(join(htmlOnly, 'reset-password.html'), '<a href="{{link}}">x</a>');
    expect(() => mailer({ templatesDir: htmlOnly })).toThrow(/reset-password\.html has no reset-password\.txt beside it/);
  });
});

describe('email settings', () => {
  it('reads RESTGRAPH_SMTP_URL, RESTGRAPH_MAIL_FROM and RESTGRAPH_MAIL_TEMPLATES', () => {
    expect(optionsFromEnv({ RESTGRAPH_SMTP_URL: 'smtps://u:p@mail.test:465', RESTGRAPH_MAIL_FROM: ' App <a@app.test> ', RESTGRAPH_MAIL_TEMPLATES: '/etc/app/mail' }).mail).toEqual({
      smtpUrl: 'smtps://u:p@mail.test:465',
      from: 'App <a@app.test>',
      templatesDir: '/etc/app/mail',
    });
    expect(optionsFromEnv({}).mail).toBeUndefined();
  });

  it('refuses an SMTP URL of another scheme, and one without a From address', () => {
    expect(() => optionsFromEnv({ RESTGRAPH_SMTP_URL: 'http://mail.test', RESTGRAPH_MAIL_FROM: 'a@app.test' })).toThrow('Invalid configuration RESTGRAPH_SMTP_URL');
    expect(() => optionsFromEnv({ RESTGRAPH_SMTP_URL: 'smtp://mail.test' })).toThrow('Invalid configuration RESTGRAPH_MAIL_FROM');
    expect(() => createMailer({ ...OFF, smtpUrl: 'smtp://mail.test' }, pino({ level: 'silent' }))).toThrow(ConfigError);
  });
});
