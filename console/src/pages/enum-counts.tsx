import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../context.js';
import { usableInQueries } from '../field-access.js';
import { href } from '../route.js';
import type { ResourceInfo } from '../schema.js';
import { andExpression, nameableInExpression, quoted } from './filter-expression.js';

interface Group {
  group: Record<string, string | null>;
  count: number;
}

interface FieldCounts {
  field: string;
  groups: Group[];
}

/** The list's address with one more condition: ANDed to its filter expression, or as a field parameter when the field cannot be named in one. */
function narrowed(resource: string, query: URLSearchParams, field: string, value: string | null): string {
  const params = new URLSearchParams(query);
  if (nameableInExpression(field)) params.set('filter', andExpression(params.get('filter') ?? '', value === null ? `${field} is null` : `${field} = ${quoted(value)}`));
  else if (value === null) params.append(`${field}[isNull]`, 'true');
  else params.append(field, value);
  return href.list(resource, params);
}

/**
 * How many rows of the list have each value of each enum field: `GET /<resource>/aggregate?groupBy=<field>&count=true`
 * under the list's filters (field parameters and expression), so the counts are of the rows the
 * list shows. A count is a link to the list narrowed to that value. Aggregates obey access: where
 * they are refused (401, 403), or fail in any other way (the list says why), the counts are not shown.
 */
export function EnumCounts({ resource, query, filters }: { resource: ResourceInfo; query: URLSearchParams; filters: URLSearchParams }) {
  const { api } = useSession();
  const [counts, setCounts] = useState<FieldCounts[]>([]);
  const enums = resource.fields.filter((field) => field.type === 'enum' && usableInQueries(field)).map((field) => field.name);
  const scope = filters.toString();
  useEffect(() => {
    const controller = new AbortController();
    const countsOf = async (field: string): Promise<FieldCounts | undefined> => {
      const params = new URLSearchParams(scope);
      params.set('groupBy', field);
      params.set('count', 'true');
      try {
        return { field, groups: await api.get<Group[]>(`/${encodeURIComponent(resource.name)}/aggregate?${params.toString()}`, controller.signal) };
      } catch {
        return undefined;
      }
    };
    void Promise.all(enums.map(countsOf)).then((found) => {
      if (!controller.signal.aborted) setCounts(found.filter((entry): entry is FieldCounts => entry !== undefined && Array.isArray(entry.groups)));
    });
    return () => controller.abort();
  }, [resource.name, scope, enums.join(',')]);
  if (counts.length === 0) return null;
  return (
    <section class="enum-counts" aria-label="Counts by value">
      {counts.map(({ field, groups }) => (
        <div key={field} class="enum-count-row">
          <span class="enum-field">{field}</span>
          {groups.length === 0 ? (
            <span class="muted">no rows</span>
          ) : (
            <ul>
              {groups.map(({ group, count }) => {
                const value = group[field] ?? null;
                const label = value ?? '(empty)';
                return (
                  <li key={value ?? ''}>
                    <a href={narrowed(resource.name, query, field, value)} aria-label={`${field} ${label}: ${count}`}>
                      {label} <span class="count">{count}</span>
                    </a>
                  </li>
                );
              })}
            </ul>
          )}
        </div>
      ))}
    </section>
  );
}
