import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type ProblemError } from '../api.js';
import { fromLocalInput, toLocalInput } from '../format.js';
import type { FieldInfo, ResourceInfo } from '../schema.js';
import { useSession } from '../context.js';
import { ErrorMessage } from '../ui.js';
import { canPick, ReferencePicker } from './reference-picker.js';

type Raw = string | boolean;
type Row = Record<string, unknown>;

/** A field's value as its input holds it. */
function toInput(field: FieldInfo, value: unknown): Raw {
  if (field.type === 'boolean') return value === true;
  if (value === null || value === undefined) return '';
  if (field.type === 'json') return JSON.stringify(value, null, 2);
  if (field.type === 'datetime' && typeof value === 'string') return toLocalInput(value);
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** An input's content as the field's JSON value, or why it cannot be one (json is checked here, before sending). */
function fromInput(field: FieldInfo, raw: Raw): { value: unknown } | { error: string } {
  if (typeof raw === 'boolean') return { value: raw };
  if (raw.trim() === '') return { value: null };
  switch (field.type) {
    case 'integer':
    case 'number': {
      const number = Number(raw);
      if (Number.isFinite(number)) return { value: number };
      return { error: field.references === undefined ? 'must be a number' : `must be the id of a row of ${field.references}: pick one of the matches, or type an id` };
    }
    case 'json':
      try {
        return { value: JSON.parse(raw) as unknown };
      } catch (error) {
        return { error: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
      }
    case 'datetime':
      return Number.isNaN(new Date(raw).getTime()) ? { error: 'must be a date and time' } : { value: fromLocalInput(raw) };
    default:
      return { value: raw };
  }
}

/** What the schema says of a field, under its input. */
function hint(field: FieldInfo): string {
  const parts: string[] = [field.type];
  if (field.references !== undefined) parts.push(`the id of a row of ${field.references}`);
  if (field.minimum !== undefined && field.maximum !== undefined) parts.push(`from ${field.minimum} to ${field.maximum}`);
  else if (field.minimum !== undefined) parts.push(`at least ${field.minimum}`);
  else if (field.maximum !== undefined) parts.push(`at most ${field.maximum}`);
  const characters = (n: number): string => `${n} ${n === 1 ? 'character' : 'characters'}`;
  if (field.minLength !== undefined && field.minLength > 0) parts.push(`at least ${characters(field.minLength)}`);
  if (field.maxLength !== undefined) parts.push(`at most ${characters(field.maxLength)}`);
  if (field.format !== undefined && field.type === 'string') parts.push(field.format);
  if (field.pattern !== undefined) parts.push(`matching ${field.pattern}`);
  if (field.type === 'datetime') parts.push('your local time');
  if (field.type === 'json') parts.push('any JSON value');
  if (field.default !== undefined) parts.push(`default ${JSON.stringify(field.default)}`);
  return parts.join(' · ');
}

function FieldInput({ field, raw, invalid, describedBy, onChange }: { field: FieldInfo; raw: Raw; invalid: boolean; describedBy: string; onChange: (raw: Raw) => void }) {
  const session = useSession();
  const id = `field-${field.name}`;
  const common = { id, name: field.name, 'aria-invalid': invalid, 'aria-describedby': describedBy, 'aria-required': field.required };
  const text = (event: Event): void => onChange((event.currentTarget as HTMLInputElement).value);
  if (field.type === 'boolean') return <input {...common} type="checkbox" checked={raw === true} onInput={(event) => onChange(event.currentTarget.checked)} />;
  const value = typeof raw === 'string' ? raw : '';
  if (canPick(field, session)) return <ReferencePicker field={field} id={id} value={value} invalid={invalid} describedBy={describedBy} required={field.required} onChange={onChange} />;
  if (field.type === 'enum') {
    return (
      <select {...common} value={value} onInput={text}>
        {!field.required && <option value="">(none)</option>}
        {field.required && value === '' && <option value="">Choose…</option>}
        {(field.enumValues ?? []).map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    );
  }
  if (field.type === 'json' || (field.type === 'string' && (field.maxLength === undefined || field.maxLength > 500))) {
    return <textarea {...common} rows={field.type === 'json' ? 4 : 3} value={value} onInput={text} spellcheck={field.type !== 'json'} />;
  }
  if (field.type === 'integer' || field.type === 'number') {
    return <input {...common} type="number" inputMode={field.type === 'integer' ? 'numeric' : 'decimal'} step={field.type === 'integer' ? '1' : 'any'} min={field.minimum} max={field.maximum} value={value} onInput={text} />;
  }
  if (field.type === 'date') return <input {...common} type="date" value={value} onInput={text} />;
  if (field.type === 'datetime') return <input {...common} type="datetime-local" step="1" value={value} onInput={text} />;
  const lengths = { minLength: field.minLength, maxLength: field.maxLength, value, onInput: text };
  if (field.format === 'email') return <input {...common} {...lengths} type="email" />;
  if (field.format === 'uri') return <input {...common} {...lengths} type="url" />;
  return <input {...common} {...lengths} type="text" />;
}

/**
 * A form generated from a resource's schema: an input per writable field chosen by its type, its
 * name as label, required fields marked. Validation is the server's (the form does not block what
 * the browser would): its problem+json `errors[].pointer` entries are shown next to their fields;
 * json is parsed here first and not sent when it is not JSON. On create, empty inputs are left
 * out (so defaults apply); on edit, only changed fields are sent (empty: null).
 */
export function RecordForm(props: { resource: ResourceInfo; record?: Row; submitLabel: string; onSubmit: (body: Row) => Promise<void> }) {
  // Files have routes of their own (the record page's file fields), never a JSON value.
  const fields = props.resource.fields.filter((field) => !field.readOnly && field.type !== 'file');
  const initial = (): Record<string, Raw> => Object.fromEntries(fields.map((field) => [field.name, toInput(field, props.record === undefined ? field.default : props.record[field.name])]));
  const [raws, setRaws] = useState<Record<string, Raw>>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<unknown>();
  const [others, setOthers] = useState<ProblemError[]>([]);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const start = useRef(initial());

  // A reloaded record replaces what the form holds.
  useEffect(() => {
    const fresh = initial();
    start.current = fresh;
    setRaws(fresh);
    setErrors({});
    setOthers([]);
  }, [props.record]);

  useEffect(() => {
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [errors]);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const body: Row = {};
    const found: Record<string, string> = {};
    for (const field of fields) {
      const raw = raws[field.name] ?? '';
      if (props.record === undefined ? raw === '' : raw === start.current[field.name]) continue;
      const parsed = fromInput(field, raw);
      if ('error' in parsed) found[field.name] = parsed.error;
      else body[field.name] = parsed.value;
    }
    setGeneral(undefined);
    setOthers([]);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      await props.onSubmit(body);
    } catch (error) {
      if (error instanceof ApiError) {
        const byField: Record<string, string> = {};
        const rest: ProblemError[] = [];
        for (const entry of error.problem.errors ?? []) {
          const name = entry.pointer?.replace(/^\//, '').split('/')[0];
          if (name !== undefined && fields.some((field) => field.name === name)) byField[name] = byField[name] === undefined ? entry.detail : `${byField[name]}; ${entry.detail}`;
          else rest.push(entry);
        }
        setErrors(byField);
        setOthers(rest);
      }
      setGeneral(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form ref={form} class="record-form" onSubmit={(event) => void submit(event)} noValidate>
      <ErrorMessage error={general} />
      {others.length > 0 && (
        <ul class="error">
          {others.map((entry, index) => (
            <li key={index}>
              {entry.pointer ?? entry.parameter ?? entry.header}: {entry.detail}
            </li>
          ))}
        </ul>
      )}
      {fields.map((field) => {
        const error = errors[field.name];
        const hintId = `field-${field.name}-hint`;
        const errorId = `field-${field.name}-error`;
        return (
          <div key={field.name} class={`field field-${field.type}${error === undefined ? '' : ' invalid'}`}>
            <label for={`field-${field.name}`}>
              {field.name}
              {field.required && (
                <abbr class="required" title="required">
                  {' '}
                  *
                </abbr>
              )}
            </label>
            <FieldInput field={field} raw={raws[field.name] ?? ''} invalid={error !== undefined} describedBy={error === undefined ? hintId : `${errorId} ${hintId}`} onChange={(raw) => setRaws({ ...raws, [field.name]: raw })} />
            {error !== undefined && (
              <p id={errorId} class="field-error">
                {field.name} {error}
              </p>
            )}
            <p id={hintId} class="hint">
              {hint(field)}
            </p>
          </div>
        );
      })}
      <p class="hint">
        <abbr class="required" title="required">
          *
        </abbr>{' '}
        required
      </p>
      <button type="submit" disabled={busy}>
        {props.submitLabel}
      </button>
    </form>
  );
}
