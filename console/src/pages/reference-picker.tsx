import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { accessTo, useSession, type Session } from '../context.js';
import { labelFieldOf, type FieldInfo, type ResourceInfo } from '../schema.js';

type Row = Record<string, unknown>;

/** How many matches the list offers. */
const MATCHES = 10;
/** How long typing may pause before the search is sent. */
const TYPING_PAUSE_MS = 150;

interface Match {
  id: string;
  label: string | undefined;
}

/** What may be typed to find a row: the text as typed, and with its first letter in the other case (`contains` is case-sensitive). */
function spellings(text: string): string[] {
  const first = text.charAt(0);
  const other = first === first.toUpperCase() ? first.toLowerCase() : first.toUpperCase();
  return [...new Set([text, other + text.slice(1)])];
}

/**
 * The rows of `target` that `text` may mean, read over the public REST API: the row whose id it is
 * (when it is a number), and those whose label field contains it (`name[contains]=…`).
 */
async function search(api: Api, target: ResourceInfo, label: FieldInfo | undefined, text: string, signal: AbortSignal): Promise<Match[]> {
  const fields = label === undefined ? 'id' : `id,${label.name}`;
  const queries: URLSearchParams[] = [];
  if (/^[1-9][0-9]{0,15}$/.test(text)) queries.push(new URLSearchParams({ id: text, fields }));
  if (label !== undefined) {
    for (const spelling of spellings(text)) queries.push(new URLSearchParams({ [`${label.name}[contains]`]: spelling, sort: label.name, limit: String(MATCHES), fields }));
  }
  const pages = await Promise.all(queries.map((query) => api.get<Row[]>(`/${encodeURIComponent(target.name)}?${query.toString()}`, signal)));
  const found = new Map<string, Match>();
  for (const row of pages.flat()) {
    const id = String(row.id);
    const value = label === undefined ? undefined : row[label.name];
    if (!found.has(id)) found.set(id, { id, label: typeof value === 'string' ? value : undefined });
  }
  return [...found.values()].slice(0, MATCHES);
}

/** Whether a reference field gets a picker: the token may read the resource it points to. */
export function canPick(field: FieldInfo, { me, schema }: Session): boolean {
  return field.references !== undefined && schema.resources.has(field.references) && accessTo(me, field.references).read;
}

/**
 * A reference field as a combobox (https://www.w3.org/WAI/ARIA/apg/patterns/combobox/): typing
 * searches the referenced resource by its label field (name, title, …) and by id over the REST
 * API; ArrowDown and ArrowUp move through the matches, Enter or a click picks one (the field then
 * holds its id), Escape closes the list. An id may still be typed as it is. Under the field, the
 * label of the row its id names.
 */
export function ReferencePicker(props: { field: FieldInfo; id: string; value: string; invalid: boolean; describedBy: string; required: boolean; onChange: (value: string) => void }) {
  const { api, schema } = useSession();
  const target = schema.resources.get(props.field.references ?? '');
  const label = target === undefined ? undefined : labelFieldOf(target);
  const [matches, setMatches] = useState<Match[]>([]);
  const [searched, setSearched] = useState<string | undefined>();
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const listId = `${props.id}-options`;
  const chosenId = `${props.id}-chosen`;
  const input = useRef<HTMLInputElement>(null);
  const text = props.value.trim();

  useEffect(() => {
    if (target === undefined || text === '') {
      setMatches([]);
      setSearched(text);
      return undefined;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      search(api, target, label, text, controller.signal).then(
        (found) => {
          setMatches(found);
          setSearched(text);
          setActive(-1);
        },
        () => {
          // Aborted, or the search was refused: the field still takes an id as typed.
          if (!controller.signal.aborted) setMatches([]);
        },
      );
    }, TYPING_PAUSE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [text, target?.name]);

  if (target === undefined) return null;
  const expanded = open && matches.length > 0;
  const pick = (match: Match): void => {
    props.onChange(match.id);
    setOpen(false);
    setActive(-1);
    input.current?.focus();
  };
  const keyDown = (event: KeyboardEvent): void => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (!open) setOpen(true);
      const last = matches.length - 1;
      setActive(event.key === 'ArrowDown' ? Math.min(active + 1, last) : Math.max(active - 1, 0));
    } else if (event.key === 'Enter' && expanded && matches[active] !== undefined) {
      event.preventDefault();
      pick(matches[active]);
    } else if (event.key === 'Escape' && expanded) {
      event.preventDefault();
      setOpen(false);
      setActive(-1);
    }
  };

  const named = searched === text && /^\d+$/.test(text) ? matches.find((match) => match.id === text) : undefined;
  const labelName = label?.name ?? 'id';
  let chosen: string;
  if (named !== undefined) chosen = `→ ${named.label ?? `${target.singular} ${named.id}`}`;
  else if (searched === text && /^\d+$/.test(text)) chosen = `No row of ${target.name} has the id ${text}.`;
  else chosen = `Type to search ${target.name} by ${labelName === 'id' ? 'id' : `${labelName} or id`}.`;

  return (
    <>
      <div class="combo">
        <input
          ref={input}
          id={props.id}
          name={props.field.name}
          type="text"
          role="combobox"
          autoComplete="off"
          spellcheck={false}
          aria-autocomplete="list"
          aria-expanded={expanded}
          aria-controls={listId}
          aria-activedescendant={expanded && active >= 0 ? `${listId}-${active}` : undefined}
          aria-invalid={props.invalid}
          aria-required={props.required}
          aria-describedby={`${chosenId} ${props.describedBy}`}
          value={props.value}
          onInput={(event) => {
            props.onChange(event.currentTarget.value);
            setOpen(true);
            setActive(-1);
          }}
          onKeyDown={keyDown}
          onBlur={() => setOpen(false)}
        />
        <ul id={listId} role="listbox" aria-label={`${target.name} matching ${props.field.name}`} hidden={!expanded}>
          {matches.map((match, index) => (
            <li
              key={match.id}
              id={`${listId}-${index}`}
              role="option"
              aria-selected={index === active}
              // Keeps the focus in the field, so that the click picks before the field's blur closes the list.
              onMouseDown={(event) => event.preventDefault()}
              onClick={() => pick(match)}
            >
              {match.label ?? `${target.singular} ${match.id}`} <span class="muted">#{match.id}</span>
            </li>
          ))}
        </ul>
      </div>
      <p id={chosenId} class="hint chosen">
        {chosen}
      </p>
      <p class="visually-hidden" role="status">
        {expanded ? `${matches.length} ${matches.length === 1 ? 'match' : 'matches'}; arrow keys to choose, Enter to pick.` : ''}
      </p>
    </>
  );
}
