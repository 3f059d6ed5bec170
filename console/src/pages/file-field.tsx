import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useSession } from '../context.js';
import type { FieldInfo } from '../schema.js';
import { ConfirmDialog, ErrorMessage } from '../ui.js';

/**
 * File fields (docs/files.md) in the console: each file with its name, type and size, a thumbnail
 * for an image, a Download button; where the token may update the record, upload (a file input:
 * the bytes `PUT` to the field's route, or `POST` to add to a multiple field) and Remove
 * (`DELETE`, after a confirmation). The API wants the token in `Authorization`, which an `<img>`
 * or a link cannot send: thumbnails and downloads are fetched, then shown or saved from blob URLs.
 */

type Row = Record<string, unknown>;

/** One file's value, as answers show it. */
export interface FileValue {
  name: string;
  type: string;
  size: number;
  url: string;
  etag: string;
}

/** The types the server makes thumbnails of. */
const THUMBNAILED = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif']);

function isFile(value: unknown): value is FileValue {
  return typeof value === 'object' && value !== null && typeof (value as FileValue).url === 'string' && typeof (value as FileValue).name === 'string';
}

/** The files a file field's value holds: none, one, or a list. */
export function filesOf(value: unknown): FileValue[] {
  if (Array.isArray(value)) return value.filter(isFile);
  return isFile(value) ? [value] : [];
}

/** Bytes for people: `812 B`, `12.1 KB`, `3.4 MB` (powers of 1024, as the schema's sizes). */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let size = bytes / 1024;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit++;
  }
  return `${size >= 10 ? size.toFixed(0) : size.toFixed(1)} ${units[unit] ?? 'TB'}`;
}

/** Reads a file with the token, as a blob. */
async function blobOf(api: Api, url: string, signal?: AbortSignal): Promise<Blob> {
  return (await api.fetch(url, signal === undefined ? {} : { signal })).blob();
}

/** The first thumbnail size of the field, for an image; undefined when the file has none. */
function thumbSize(field: FieldInfo, file: FileValue): string | undefined {
  return THUMBNAILED.has(file.type) ? field.file?.thumbs[0] : undefined;
}

/** An image's thumbnail, fetched with the token and shown from a blob URL (revoked when it goes). */
function Thumbnail({ file, size }: { file: FileValue; size: string }) {
  const { api } = useSession();
  const [source, setSource] = useState<string | undefined>();
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const abort = new AbortController();
    let made: string | undefined;
    blobOf(api, `${file.url}?thumb=${encodeURIComponent(size)}`, abort.signal).then(
      (blob) => {
        made = URL.createObjectURL(blob);
        setSource(made);
      },
      () => setFailed(true),
    );
    return () => {
      abort.abort();
      if (made !== undefined) URL.revokeObjectURL(made);
    };
  }, [file.url, file.etag, size]);
  const [width, height] = size.replace(/c$/, '').split('x');
  if (failed) return null;
  return <img class="thumb" src={source} alt={`Thumbnail of ${file.name}`} width={Number(width)} height={Number(height)} />;
}

/** Saves a file under its name: fetched with the token, then handed to the browser from a blob URL. */
function DownloadButton({ file }: { file: FileValue }) {
  const { api } = useSession();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const download = async (): Promise<void> => {
    setError(undefined);
    setBusy(true);
    try {
      const url = URL.createObjectURL(await blobOf(api, file.url));
      const link = document.createElement('a');
      link.href = url;
      link.download = file.name;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" disabled={busy} onClick={() => void download()} aria-label={`Download ${file.name}`}>
        Download
      </button>
      <ErrorMessage error={error} />
    </>
  );
}

/** One file: a thumbnail for an image, its name, type and size. */
function FileSummary({ field, file }: { field: FieldInfo; file: FileValue }) {
  const size = thumbSize(field, file);
  return (
    <span class="file-summary">
      {size !== undefined && <Thumbnail file={file} size={size} />}
      <span class="file-name" title={file.name}>
        {file.name}
      </span>{' '}
      <span class="muted">
        {file.type} · {byteSize(file.size)}
      </span>
    </span>
  );
}

/** A file field's value in a table cell: an image's thumbnail and its name, or how many files a list holds. */
export function FileCell({ field, value }: { field: FieldInfo; value: unknown }) {
  const files = filesOf(value);
  if (files.length === 0) return <span class="null">—</span>;
  const first = files[0] as FileValue;
  if (field.file?.multiple === true) {
    return (
      <span title={files.map((file) => file.name).join(', ')}>
        {files.length} {files.length === 1 ? 'file' : 'files'}
      </span>
    );
  }
  const size = thumbSize(field, first);
  return (
    <span class="file-summary">
      {size !== undefined && <Thumbnail file={first} size={size} />}
      <span class="file-name" title={`${first.name} · ${first.type} · ${byteSize(first.size)}`}>
        {first.name}
      </span>
    </span>
  );
}

/**
 * A file field on a record's page: its files, each with Download (and Remove when `editable`),
 * and an upload input when `editable`. `onChange` gets the record the server answered.
 */
export function FileField({ field, record, path, editable, onChange }: { field: FieldInfo; record: Row; path: string; editable: boolean; onChange: (record: Row, etag: string | undefined) => void }) {
  const { api } = useSession();
  const files = filesOf(record[field.name]);
  const multiple = field.file?.multiple === true;
  const full = multiple && field.file?.maxFiles !== undefined && files.length >= field.file.maxFiles;
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState<string | undefined>();
  const [removing, setRemoving] = useState<FileValue | undefined>();
  const input = useRef<HTMLInputElement>(null);
  const route = `${path}/${encodeURIComponent(field.name)}`;
  const inputId = `file-${field.name}`;

  const run = async (what: string, request: () => Promise<Response>): Promise<void> => {
    setError(undefined);
    setBusy(what);
    try {
      const response = await request();
      // An upload answers the record; a removal answers 204, and the record is read again.
      const answered = response.status === 204 ? await api.call<Row>(path) : { body: (await response.json()) as Row, headers: response.headers };
      onChange(answered.body, answered.headers.get('etag') ?? undefined);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  };
  const upload = (file: File): Promise<void> =>
    run(`Uploading ${file.name}…`, () =>
      api.fetch(`${route}?name=${encodeURIComponent(file.name)}`, { method: multiple ? 'POST' : 'PUT', headers: { 'content-type': file.type === '' ? 'application/octet-stream' : file.type, accept: 'application/json' }, body: file }),
    );
  const chosen = (event: Event): void => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0];
    if (file !== undefined) void upload(file);
    if (input.current !== null) input.current.value = '';
  };
  const remove = (file: FileValue): Promise<void> => {
    setRemoving(undefined);
    // A multiple field's file is removed at its own url; a single file at the field's route.
    return run(`Removing ${file.name}…`, () => api.fetch(multiple ? file.url : route, { method: 'DELETE' }));
  };

  return (
    <div class="file-field" role="group" aria-labelledby={`${inputId}-label`}>
      <h3 id={`${inputId}-label`}>{field.name}</h3>
      {files.length === 0 ? (
        <p class="muted">No file.</p>
      ) : (
        <ul class="files">
          {files.map((file) => (
            <li key={file.etag}>
              <FileSummary field={field} file={file} />
              <span class="file-actions">
                <DownloadButton file={file} />
                {editable && (
                  <button type="button" class="danger" disabled={busy !== undefined} onClick={() => setRemoving(file)} aria-label={`Remove ${file.name}`}>
                    Remove
                  </button>
                )}
              </span>
            </li>
          ))}
        </ul>
      )}
      {editable && (
        <p class="file-upload">
          <label for={inputId}>{multiple ? `Add a file to ${field.name}` : files.length === 0 ? `Upload ${field.name}` : `Replace ${field.name}`}</label>
          <input id={inputId} ref={input} type="file" disabled={busy !== undefined || full} onChange={chosen} aria-describedby={`${inputId}-hint`} />
          <span id={`${inputId}-hint`} class="hint">
            {multiple ? `up to ${field.file?.maxFiles ?? 'several'} files${full ? ': full, remove one first' : ''}` : 'one file; a new upload replaces it'}
          </span>
        </p>
      )}
      <p role="status" class="muted">
        {busy}
      </p>
      <ErrorMessage error={error} />
      {removing !== undefined && (
        <ConfirmDialog title={`Remove ${removing.name}?`} confirm="Remove file" onConfirm={() => void remove(removing)} onCancel={() => setRemoving(undefined)}>
          <p>
            The file is deleted from {field.name}; this cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
