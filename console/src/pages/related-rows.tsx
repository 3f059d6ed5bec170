import { useEffect, useState } from 'preact/hooks';
import { accessTo, useSession } from '../context.js';
import { href } from '../route.js';
import type { RelationInfo, ResourceInfo } from '../schema.js';
import { ErrorMessage, TableBox } from '../ui.js';
import { RecordRow } from './record-row.js';
import { CellValue } from './resource-list-page.js';

type Row = Record<string, unknown>;

/** How many related rows a record's page shows per relation. */
const FIRST_ROWS = 5;
/** Columns left out of the related tables: the foreign key (it is this record) and the times. */
const STAMPS = new Set(['createdAt', 'updatedAt']);

/**
 * The first rows of one hasMany relation of a record (`GET /books?authorId=31&limit=5&count=true`),
 * each opening its own record, with how many there are and a link to the list filtered so.
 */
export function RelatedRows({ resource, id, relation }: { resource: ResourceInfo; id: string; relation: RelationInfo }) {
  const { api, me, schema } = useSession();
  const target = schema.resources.get(relation.target);
  const readable = target !== undefined && accessTo(me, target.name).read;
  const [rows, setRows] = useState<Row[] | undefined>();
  const [total, setTotal] = useState<number | undefined>();
  const [error, setError] = useState<unknown>();
  const filter = new URLSearchParams({ [relation.foreignKey]: id });
  const titleId = `related-${relation.name}-title`;

  useEffect(() => {
    if (!readable) return undefined;
    const controller = new AbortController();
    const query = new URLSearchParams({ [relation.foreignKey]: id, limit: String(FIRST_ROWS), count: 'true' });
    api.call<Row[]>(`/${encodeURIComponent(relation.target)}?${query.toString()}`, { signal: controller.signal }).then(
      (response) => {
        setRows(response.body);
        const counted = Number(response.headers.get('x-total-count') ?? response.body.length);
        setTotal(Number.isFinite(counted) ? counted : response.body.length);
      },
      (failure: unknown) => {
        if (!controller.signal.aborted) setError(failure);
      },
    );
    return () => controller.abort();
  }, [relation.target, relation.foreignKey, id, readable]);

  if (target === undefined) return null;
  const whose = (
    <>
      whose <code>{relation.foreignKey}</code> is this {resource.singular}
    </>
  );
  const columns = target.fields.filter((field) => field.name !== relation.foreignKey && !STAMPS.has(field.name));
  let summary;
  if (rows === undefined || total === undefined) summary = null;
  else if (total === 0) summary = <>No {target.name} {whose}.</>;
  else if (total > rows.length) summary = <>The first {rows.length} of {total} {target.name} {whose}.</>;
  else summary = <>The {total} {total === 1 ? target.singular : target.name} {whose}.</>;

  return (
    <section class="related" aria-labelledby={titleId}>
      <h2 id={titleId}>{relation.name}</h2>
      {!readable && <p class="muted">This token may not read {target.name}.</p>}
      <ErrorMessage error={error} />
      {summary !== null && (
        <p class="muted">
          {summary}{' '}
          {total !== undefined && total > 0 && <a href={href.list(target.name, filter)}>{rows !== undefined && total > rows.length ? `All ${total} ${target.name}` : `The filtered list of ${target.name}`}</a>}
        </p>
      )}
      {rows !== undefined && rows.length > 0 && (
        <TableBox label={`${relation.name} of this ${resource.singular}`}>
          <thead>
            <tr>
              {columns.map((field) => (
                <th key={field.name} scope="col">
                  {field.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <RecordRow key={String(row.id)} resource={target.name} id={String(row.id)}>
                {columns.map((field) => (
                  <td key={field.name}>{field.name === 'id' ? <a href={href.record(target.name, String(row.id))}>{String(row.id)}</a> : <CellValue field={field} value={row[field.name]} />}</td>
                ))}
              </RecordRow>
            ))}
          </tbody>
        </TableBox>
      )}
    </section>
  );
}
