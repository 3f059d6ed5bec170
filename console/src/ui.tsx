import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from './api.js';

/** The page's heading, focused when the page opens so that keyboard and screen-reader users start there. */
export function PageHeading({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

/** A failed call, said in the server's words (401 and 403 explain themselves). */
export function ErrorMessage({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error" role="alert">
      {describeError(error)}
    </p>
  );
}

/** A modal confirmation (a native dialog: focus is trapped, Escape cancels). */
export function ConfirmDialog(props: { title: string; children: ComponentChildren; confirm: string; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog !== null && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onCancel={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirm}
        </button>
      </div>
    </dialog>
  );
}

/**
 * A secret the server shows only once (an API key, a webhook signing secret): in a read-only field,
 * with a Copy button and a warning. It may appear far from where the person is (above the form
 * that made it): the page scrolls to it and the field takes the focus, so that a keyboard or
 * screen-reader user lands on it, with the warning as its description.
 */
export function ShownOnce(props: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | undefined>();
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    field.current?.closest('section')?.scrollIntoView({ block: 'nearest' });
    field.current?.focus({ preventScroll: true });
  }, [props.value]);
  const copy = (): void => {
    navigator.clipboard.writeText(props.value).then(
      () => setCopied('Copied to the clipboard.'),
      () => setCopied('The browser did not allow copying: select the text and copy it.'),
    );
  };
  return (
    <section class="shown-once" aria-labelledby="shown-once-title">
      <h2 id="shown-once-title">{props.label}</h2>
      <p class="warning" id="shown-once-warning">
        <strong>Store it now:</strong> it is shown only this once, and cannot be read again.
      </p>
      <div class="copy-row">
        <label for="shown-once-value" class="visually-hidden">
          {props.label}
        </label>
        <input id="shown-once-value" ref={field} readOnly value={props.value} aria-describedby="shown-once-warning" onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status">{copied}</p>
      <button type="button" onClick={props.onDone}>
        Done
      </button>
    </section>
  );
}

/** A table in a box that scrolls sideways on narrow screens (and by keyboard: it can take focus). */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-box" tabIndex={0} role="region" aria-label={label}>
      <table>{children}</table>
    </div>
  );
}
