import type { ComponentChildren } from 'preact';
import { href } from '../route.js';

/** Elements of a row that do something of their own when clicked. */
const OWN_ACTIONS = 'a, button, input, select, textarea, label, summary';

/**
 * A table row that opens its record: a click anywhere on it (but on a link or a control of its
 * own, which keep doing what they do, or at the end of selecting text), or Enter while the row has
 * the focus (it is in the tab order). The id cell's link stays, for opening in a new tab.
 */
export function RecordRow({ resource, id, children }: { resource: string; id: string; children: ComponentChildren }) {
  const open = (): void => {
    location.hash = href.record(resource, id);
  };
  const click = (event: MouseEvent): void => {
    if (event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    if (event.target instanceof Element && event.target.closest(OWN_ACTIONS) !== null) return;
    if ((getSelection()?.toString() ?? '') !== '') return;
    open();
  };
  const keyDown = (event: KeyboardEvent): void => {
    if (event.key !== 'Enter' || event.target !== event.currentTarget) return;
    event.preventDefault();
    open();
  };
  return (
    <tr class="opens" tabIndex={0} onClick={click} onKeyDown={keyDown}>
      {children}
    </tr>
  );
}
