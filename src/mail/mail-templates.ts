import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAIL_PLACEHOLDERS, MAIL_TEMPLATE_NAMES, type MailRequest, type MailTemplateName } from '../core/mailer.js';
import { ConfigError } from '../errors.js';

/**
 * The templates shipped in the package (templates/mail/): from src/mail/ and dist/mail/ alike,
 * two folders up.
 */
export const DEFAULT_MAIL_TEMPLATES_DIR = fileURLToPath(new URL('../../templates/mail/', import.meta.url));

/** A message ready to send: its subject line, its plain text, and its HTML when the template has one. */
export interface RenderedMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string | undefined;
}

interface Template {
  readonly subject: string;
  readonly text: string;
  readonly html: string | undefined;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9]*)\s*\}\}/g;
const SUBJECT_LINE = /^Subject:[ \t]*(.*?)\r?\n(?:\r?\n)?/;

/**
 * The email templates: `<name>.txt` (its first line `Subject: …`, then a blank line, then the
 * body) and, optionally, `<name>.html` (the HTML body). Values replace `{{name}}` placeholders:
 * as they are in the text, HTML-escaped in the HTML, on one line in the subject. Read and checked
 * once, at start-up.
 */
export class MailTemplates {
  readonly #templates: ReadonlyMap<MailTemplateName, Template>;

  private constructor(templates: ReadonlyMap<MailTemplateName, Template>) {
    this.#templates = templates;
  }

  /**
   * Loads every template from `overrideDir` where it has the template's `.txt` (the template is
   * then that folder's, with its `.html` if there is one), else from the package's defaults.
   *
   * @throws ConfigError naming RESTGRAPH_MAIL_TEMPLATES for a missing folder, an `.html` without
   *   its `.txt`, a `.txt` without its `Subject:` line, or an unknown placeholder.
   */
  static load(overrideDir?: string): MailTemplates {
    if (overrideDir !== undefined && !(existsSync(overrideDir) && statSync(overrideDir).isDirectory())) {
      throw new ConfigError('RESTGRAPH_MAIL_TEMPLATES', `"${overrideDir}" is not a folder`);
    }
    const templates = new Map<MailTemplateName, Template>();
    for (const name of MAIL_TEMPLATE_NAMES) {
      let dir = DEFAULT_MAIL_TEMPLATES_DIR;
      if (overrideDir !== undefined) {
        if (existsSync(join(overrideDir, `${name}.txt`))) dir = overrideDir;
        else if (existsSync(join(overrideDir, `${name}.html`))) {
          throw new ConfigError('RESTGRAPH_MAIL_TEMPLATES', `${join(overrideDir, `${name}.html`)} has no ${name}.txt beside it (the text part and the subject line)`);
        }
      }
      templates.set(name, readTemplate(dir, name));
    }
    return new MailTemplates(templates);
  }

  /** The message of `request`: its template with the request's values in place. */
  render(request: MailRequest): RenderedMail {
    const template = this.#templates.get(request.template);
    if (template === undefined) throw new RangeError(`no mail template "${request.template}"`);
    const values: Record<string, string> = { email: request.to, link: request.link, expiresInMinutes: String(request.expiresInMinutes) };
    return {
      // A value never adds a header: line breaks in it become spaces.
      subject: substitute(template.subject, values, (v) => v.replace(/[\r\n]+/g, ' ')),
      text: substitute(template.text, values, (v) => v),
      html: template.html === undefined ? undefined : substitute(template.html, values, escapeHtml),
    };
  }
}

function readTemplate(dir: string, name: MailTemplateName): Template {
  const textFile = join(dir, `${name}.txt`);
  const htmlFile = join(dir, `${name}.html`);
  const source = readFileSync(textFile, 'utf8');
  const subject = SUBJECT_LINE.exec(source);
  if (subject === null || subject[1] === undefined || subject[1].trim() === '') {
    throw new ConfigError('RESTGRAPH_MAIL_TEMPLATES', `${textFile} must begin with a "Subject: …" line, then a blank line and the body`);
  }
  const html = existsSync(htmlFile) ? readFileSync(htmlFile, 'utf8') : undefined;
  const template = { subject: subject[1].trim(), text: source.slice(subject[0].length), html };
  checkPlaceholders(textFile, `${template.subject}\n${template.text}`);
  if (html !== undefined) checkPlaceholders(htmlFile, html);
  return template;
}

function checkPlaceholders(file: string, text: string): void {
  for (const match of text.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    if (!MAIL_PLACEHOLDERS.includes(name)) {
      throw new ConfigError('RESTGRAPH_MAIL_TEMPLATES', `${file} uses {{${name}}}; the placeholders are ${MAIL_PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}`);
    }
  }
}

function substitute(text: string, values: Readonly<Record<string, string>>, encode: (value: string) => string): string {
  return text.replace(PLACEHOLDER, (_whole, name: string) => encode(values[name] ?? ''));
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes a value for HTML text and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}
