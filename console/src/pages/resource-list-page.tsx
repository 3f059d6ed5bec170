import { useEffect, useMemo, useState } from 'preact/hooks';
import { nextLink } from '../api.js';
import { accessTo, useSession } from '../context.js';
import { usableInQueries } from '../field-access.js';
import { compactJson } from '../format.js';
import { href } from '../route.js';
import type { FieldInfo, ResourceInfo } from '../schema.js';
import { ErrorMessage, PageHeading, TableBox } from '../ui.js';
import { EnumCounts } from './enum-counts.js';
import { ExpressionBar, expressionProblemOf } from './filter-expression.js';
import { FilterBar, filterParts, type Filter } from './filter-bar.js';
import { FileCell } from './file-field.js';
import { RecordRow } from './record-row.js';

type Row = Record<string, unknown>;

const PAGE_SIZES = ['25', '50', '100'];
/** Parameters of the page's address that are not field filters: the filter expression has a bar of its own. */
const NOT_FILTERS = new Set(['sort', 'limit', 'filter']);

/** A cell's value: references link to their row, json is shown on one line, null as a dash. */
export function CellValue({ field, value }: { field: FieldInfo; value: unknown }) {
  if (field.type === 'file') return <FileCell field={field} value={value} />;
  if (value === null || value === undefined) return <span class="null">—</span>;
  if (field.references !== undefined && (typeof value === 'number' || typeof value === 'string')) return <a href={href.record(field.references, value)}>{String(value)}</a>;
  if (field.type === 'json') {
    return (
      <code class="json" title={JSON.stringify(value)}>
        {compactJson(value)}
      </code>
    );
  }
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return <code>{compactJson(value)}</code>;
  const text = String(value);
  return <span title={text.length > 60 ? text : undefined}>{text.length > 60 ? `${text.slice(0, 59)}…` : text}</span>;
}

/**
 * A resource's table: a column per field, sorted by clicking a header (`sort`), filtered with the
 * list operators and a filter expression (`filter=`), paged by following `Link: rel="next"` (a
 * keyset cursor, which keeps the filters: as fast on row 100,000 as on row 1), with the total of
 * the query from `count=true` on its first page and the counts per enum value. The sort and
 * filters live in the URL's fragment; "Previous" goes back through the pages seen.
 */
export function ResourceListPage({ resource, query }: { resource: ResourceInfo; query: URLSearchParams }) {
  const { api, me } = useSession();
  const access = accessTo(me, resource.name);
  const limit = PAGE_SIZES.includes(query.get('limit') ?? '') ? (query.get('limit') ?? '25') : '25';
  const sort = query.get('sort') ?? '';
  const filters: Filter[] = [...query].filter(([key]) => !NOT_FILTERS.has(key)).map(([parameter, value]) => ({ parameter, value }));
  const expression = query.get('filter') ?? '';
  // What the rows are filtered by: the list's and the enum counts' queries both carry it.
  const scope = new URLSearchParams();
  for (const filter of filters) scope.append(filter.parameter, filter.value);
  if (expression !== '') scope.set('filter', expression);
  const first = new URLSearchParams({ limit, count: 'true' });
  if (sort !== '') first.set('sort', sort);
  for (const [parameter, value] of scope) first.append(parameter, value);
  const firstUrl = `/${encodeURIComponent(resource.name)}?${first.toString()}`;

  const [pages, setPages] = useState<string[]>([firstUrl]);
  const [rows, setRows] = useState<Row[] | undefined>();
  const [next, setNext] = useState<string | undefined>();
  const [total, setTotal] = useState<string | undefined>();
  const [error, setError] = useState<unknown>();
  // Which page the rows shown are of: until it is the page asked for, the table is loading.
  const [loadedUrl, setLoadedUrl] = useState<string | undefined>();
  const pageUrl = pages[pages.length - 1] ?? firstUrl;
  const loading = loadedUrl !== pageUrl;

  useEffect(() => {
    setPages([firstUrl]);
    setTotal(undefined);
  }, [firstUrl]);

  useEffect(() => {
    const controller = new AbortController();
    setError(undefined);
    api
      .call<Row[]>(pageUrl, { signal: controller.signal })
      .then((response) => {
        setRows(response.body);
        const counted = response.headers.get('x-total-count');
        if (counted !== null) setTotal(counted);
        const following = nextLink(response.headers.get('link'));
        if (following === undefined) setNext(undefined);
        else {
          // The total was counted with the first page; the following pages need not count again.
          const url = new URL(following, location.href);
          url.searchParams.delete('count');
          setNext(url.pathname + url.search);
        }
        setLoadedUrl(pageUrl);
      })
      .catch((failure: unknown) => {
        if (controller.signal.aborted) return;
        setError(failure);
        setRows(undefined);
        setLoadedUrl(pageUrl);
      });
    return () => controller.abort();
  }, [pageUrl]);

  const go = (change: (params: URLSearchParams) => void): void => {
    const params = new URLSearchParams(query);
    change(params);
    location.hash = href.list(resource.name, params);
  };
  const sortBy = (field: string): void =>
    go((params) => {
      if (sort === field) params.set('sort', `-${field}`);
      else if (sort === `-${field}`) params.delete('sort');
      else params.set('sort', field);
    });
  const addFilter = (filter: Filter): void => go((params) => params.append(filter.parameter, filter.value));
  const applyExpression = (text: string): void =>
    go((params) => {
      if (text === '') params.delete('filter');
      else params.set('filter', text);
    });
  // Kept while the error is: the bar moves the focus to the place once per refusal, not per render.
  const expressionProblem = useMemo(() => expressionProblemOf(error), [error]);
  const removeFilter = (index: number): void =>
    go((params) => {
      params.delete(filters[index]?.parameter ?? '');
      filters.forEach((filter, i) => {
        if (i !== index && filter.parameter === filters[index]?.parameter) params.append(filter.parameter, filter.value);
      });
    });

  const ariaSort = (field: string): 'ascending' | 'descending' | undefined => (sort === field ? 'ascending' : sort === `-${field}` ? 'descending' : undefined);
  return (
    <>
      <div class="title-row">
        <PageHeading>{resource.name}</PageHeading>
        {access.create && (
          <a class="button" href={href.create(resource.name)}>
            New {resource.singular}
          </a>
        )}
      </div>
      {resource.description !== undefined && <p class="muted">{resource.description}</p>}
      {access.rules?.list.allowed === 'rule' && (
        <p class="muted rule-note">
          This token sees only the rows where <code>{access.rules.list.rule}</code>.
        </p>
      )}
      <ExpressionBar expression={expression} problem={expressionProblem} onApply={applyExpression} />
      <FilterBar resource={resource} onAdd={addFilter} />
      {filters.length > 0 && (
        <ul class="chips" aria-label="Filters">
          {filters.map((filter, index) => {
            const { field, operator } = filterParts(filter.parameter);
            const text = `${field} ${operator} ${filter.value}`;
            return (
              <li key={`${filter.parameter}=${filter.value}`}>
                <span>{text}</span>
                <button type="button" aria-label={`Remove filter ${text}`} onClick={() => removeFilter(index)}>
                  ×
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {expressionProblem === undefined && <ErrorMessage error={error} />}
      <EnumCounts resource={resource} query={query} filters={scope} />
      <nav class="pager" aria-label="Pages">
        <p class="list-summary" role="status">
          {loading ? 'Loading…' : `${total === undefined ? '' : `Total: ${total} · `}page ${pages.length}`}
        </p>
        <button type="button" disabled={pages.length <= 1 || loading} onClick={() => setPages(pages.slice(0, -1))}>
          Previous
        </button>
        <button type="button" disabled={next === undefined || loading} onClick={() => next !== undefined && setPages([...pages, next])}>
          Next
        </button>
        <label for="page-size">Rows per page</label>
        <select id="page-size" value={limit} onInput={(event) => go((params) => params.set('limit', event.currentTarget.value))}>
          {PAGE_SIZES.map((size) => (
            <option key={size} value={size}>
              {size}
            </option>
          ))}
        </select>
      </nav>
      {rows !== undefined && (
        <TableBox label={`${resource.name} table`}>
          <thead>
            <tr>
              {resource.fields.map((field) => (
                <th key={field.name} scope="col" aria-sort={ariaSort(field.name)}>
                  {field.type === 'json' || field.type === 'file' || !usableInQueries(field) ? (
                    <span title={field.readRule === undefined ? undefined : `Shown only on the rows where ${field.readRule}`}>
                      {field.name}
                      {field.readRule !== undefined && <span class="muted"> (some rows)</span>}
                    </span>
                  ) : (
                    <button type="button" class="sort" onClick={() => sortBy(field.name)} title={`Sort by ${field.name}`}>
                      {field.name}
                      <span aria-hidden="true">{sort === field.name ? ' ▲' : sort === `-${field.name}` ? ' ▼' : ''}</span>
                    </button>
                  )}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 && (
              <tr>
                <td colSpan={resource.fields.length}>No {resource.name}.</td>
              </tr>
            )}
            {rows.map((row) => (
              <RecordRow key={String(row.id)} resource={resource.name} id={String(row.id)}>
                {resource.fields.map((field) => (
                  <td key={field.name}>{field.name === 'id' ? <a href={href.record(resource.name, String(row.id))}>{String(row.id)}</a> : <CellValue field={field} value={row[field.name]} />}</td>
                ))}
              </RecordRow>
            ))}
          </tbody>
        </TableBox>
      )}
    </>
  );
}
