import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { accessTo, useSession, type Session } from '../context.js';
import { href } from '../route.js';
import { referrersOf, type Referrer, type ResourceInfo } from '../schema.js';
import { ConfirmDialog, ErrorMessage, PageHeading } from '../ui.js';
import { RecordForm } from './record-form.js';
import { RelatedRows } from './related-rows.js';
import { CellValue } from './resource-list-page.js';
import { FileField } from './file-field.js';

type Row = Record<string, unknown>;

interface Loaded {
  record: Row;
  etag: string | undefined;
}

/** What deleting a row does to rows that refer to it, by the schema's onDelete rules (docs/schema.md). */
interface Consequence {
  referrer: Referrer;
  /** How many rows refer to this one now (when the token may count them). */
  count: string | undefined;
}

async function consequencesOf(session: Session, resource: ResourceInfo, id: string): Promise<Consequence[]> {
  return Promise.all(
    referrersOf(session.schema, resource.name).map(async (referrer) => {
      if (!accessTo(session.me, referrer.resource).read) return { referrer, count: undefined };
      try {
        const params = new URLSearchParams({ [referrer.field]: id, limit: '1', count: 'true', fields: 'id' });
        const response = await session.api.call(`/${encodeURIComponent(referrer.resource)}?${params.toString()}`);
        return { referrer, count: response.headers.get('x-total-count') ?? undefined };
      } catch {
        return { referrer, count: undefined };
      }
    }),
  );
}

function ConsequenceText({ consequence, singular }: { consequence: Consequence; singular: string }) {
  const { referrer, count } = consequence;
  const now = count === undefined ? '' : ` (now: ${count})`;
  const rows = (
    <>
      rows of {referrer.resource} whose <code>{referrer.field}</code> is this {singular}
    </>
  );
  switch (referrer.onDelete) {
    case 'cascade':
      return (
        <li>
          <strong>cascade</strong>: the {rows} are deleted too, and their own rules apply in turn{now}.
        </li>
      );
    case 'setNull':
      return (
        <li>
          <strong>setNull</strong>: the {rows} are kept, with <code>{referrer.field}</code> set to null{now}.
        </li>
      );
    default:
      return (
        <li>
          <strong>restrict</strong>: the delete is refused while there are {rows}{now}.
        </li>
      );
  }
}

/**
 * One record: its fields, an edit form sent with `If-Match` (a 412 says someone else changed it and
 * offers to reload), and Delete with a confirmation that says what the onDelete rules will do.
 * Only what the token may do is offered.
 */
export function RecordPage({ resource, id }: { resource: ResourceInfo; id: string }) {
  const session = useSession();
  const { api, me } = session;
  const access = accessTo(me, resource.name);
  const path = `/${encodeURIComponent(resource.name)}/${encodeURIComponent(id)}`;
  const [loaded, setLoaded] = useState<Loaded | undefined>();
  const [error, setError] = useState<unknown>();
  const [conflict, setConflict] = useState(false);
  const [saved, setSaved] = useState(false);
  const [confirming, setConfirming] = useState<Consequence[] | undefined>();
  const [deleteError, setDeleteError] = useState<unknown>();

  const load = async (): Promise<void> => {
    setError(undefined);
    try {
      const response = await api.call<Row>(path);
      setLoaded({ record: response.body, etag: response.headers.get('etag') ?? undefined });
      setConflict(false);
    } catch (failure) {
      setError(failure);
    }
  };
  useEffect(() => {
    void load();
  }, [path]);

  const save = async (body: Row): Promise<void> => {
    if (loaded === undefined) return;
    setSaved(false);
    setConflict(false);
    try {
      const response = await api.call<Row>(path, { method: 'PATCH', body, headers: loaded.etag === undefined ? {} : { 'if-match': loaded.etag } });
      setLoaded({ record: response.body, etag: response.headers.get('etag') ?? undefined });
      setSaved(true);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 412) setConflict(true);
      else throw failure;
    }
  };
  const askDelete = async (): Promise<void> => {
    setDeleteError(undefined);
    setConfirming(await consequencesOf(session, resource, id));
  };
  const remove = async (): Promise<void> => {
    setConfirming(undefined);
    try {
      await api.call(path, { method: 'DELETE', headers: loaded?.etag === undefined ? {} : { 'if-match': loaded.etag } });
      location.hash = href.list(resource.name);
    } catch (failure) {
      setDeleteError(failure);
    }
  };

  const fileFields = resource.fields.filter((field) => field.type === 'file');
  const readOnly = resource.fields.filter((field) => (field.readOnly || !access.update) && field.type !== 'file');
  return (
    <>
      <p class="crumbs">
        <a href={href.list(resource.name)}>{resource.name}</a> /
      </p>
      <div class="title-row">
        <PageHeading>
          {resource.singular} {id}
        </PageHeading>
        {access.delete && loaded !== undefined && (
          <button type="button" class="danger" onClick={() => void askDelete()}>
            Delete
          </button>
        )}
      </div>
      <ErrorMessage error={error} />
      <ErrorMessage error={deleteError} />
      {conflict && (
        <div class="error" role="alert">
          <p>
            Someone else changed this {resource.singular} after you opened it (412 precondition-failed): your changes were not saved. Reload to see the current version, then make your changes again.
          </p>
          <button type="button" onClick={() => void load()}>
            Reload
          </button>
        </div>
      )}
      {saved && (
        <p class="ok" role="status">
          Saved.
        </p>
      )}
      {loaded !== undefined && (
        <>
          <dl class="record">
            {readOnly.map((field) => (
              <div key={field.name}>
                <dt>{field.name}</dt>
                <dd>
                  {field.readRule !== undefined && !(field.name in loaded.record) ? (
                    <span class="muted" title={`Readable only on the rows where ${field.readRule}`}>
                      not readable on this {resource.singular}
                    </span>
                  ) : (
                    <CellValue field={field} value={loaded.record[field.name]} />
                  )}
                </dd>
              </div>
            ))}
          </dl>
          {fileFields.length > 0 && (
            <section aria-labelledby="files-title" class="files-section">
              <h2 id="files-title">Files</h2>
              {fileFields.map((field) =>
                field.readRule !== undefined && !(field.name in loaded.record) ? null : (
                  <FileField key={field.name} field={field} record={loaded.record} path={path} editable={access.update && !field.readOnly} onChange={(record, etag) => setLoaded({ record, etag })} />
                ),
              )}
            </section>
          )}
          {resource.hasMany.map((relation) => (
            <RelatedRows key={relation.name} resource={resource} id={id} relation={relation} />
          ))}
          {access.update && (
            <section aria-labelledby="edit-title">
              <h2 id="edit-title">Edit</h2>
              <RecordForm resource={resource} record={loaded.record} submitLabel="Save" onSubmit={save} />
            </section>
          )}
        </>
      )}
      {confirming !== undefined && (
        <ConfirmDialog title={`Delete ${resource.singular} ${id}?`} confirm={`Delete ${resource.singular}`} onConfirm={() => void remove()} onCancel={() => setConfirming(undefined)}>
          <p>This cannot be undone.</p>
          {confirming.length === 0 ? (
            <p>No other rows refer to {resource.name}.</p>
          ) : (
            <>
              <p>The schema's onDelete rules for rows that refer to it:</p>
              <ul>
                {confirming.map((consequence) => (
                  <ConsequenceText key={`${consequence.referrer.resource}.${consequence.referrer.field}`} consequence={consequence} singular={resource.singular} />
                ))}
              </ul>
            </>
          )}
        </ConfirmDialog>
      )}
    </>
  );
}
