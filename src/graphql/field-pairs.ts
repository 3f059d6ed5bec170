import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import { saturated, type MeasuredDocument } from './query-limits.js';

/** Fields selected at one place (response path) of a document, and the places below it. */
interface Place {
  fields: number;
  below: Map<string, Place> | undefined;
}

/**
 * Pairs of fields that share a response path: `{ user { name name } }` has one (`user.name`),
 * fifty `posts { title }` side by side have 1,225 at `posts` and as many at `posts.title`.
 * Validation (graphql-js's OverlappingFieldsCanBeMerged) compares each such pair, from each
 * selection set above it, so its time grows with their number, which grows as the square of the
 * document's size: 1,200 `posts { title }` in a 5,000-token query took it 0.2 to 0.5 s before it
 * gave up ("Validation aborted."). Counted here in linear time, before validation.
 *
 * Operations are counted with their fragments expanded (where pairs from different fragments
 * meet), which {@link measureDocument}'s selections budget bounds; each fragment definition is
 * also counted on its own, unexpanded (validation looks at fragments no operation uses too).
 * Needs a document without fragment cycles.
 */
export function fieldPairs(document: DocumentNode, measured: MeasuredDocument): number {
  const fragments = new Map<string, FragmentDefinitionNode>(measured.fragmentOrder.map((f) => [f.name.value, f]));
  let pairs = 0;
  const count = (root: SelectionSetNode, expand: boolean): void => {
    // Its own stack: a chain of fragments spreading each other is as long as the document allows.
    const pending: { set: SelectionSetNode; at: Place }[] = [{ set: root, at: { fields: 0, below: undefined } }];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const { set, at } = next;
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          at.below ??= new Map();
          const name = (selection.alias ?? selection.name).value;
          let place = at.below.get(name);
          if (place === undefined) {
            place = { fields: 0, below: undefined };
            at.below.set(name, place);
          }
          // The n-th field at a place makes n - 1 more pairs.
          pairs = saturated(pairs + place.fields);
          place.fields++;
          if (selection.selectionSet !== undefined) pending.push({ set: selection.selectionSet, at: place });
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          pending.push({ set: selection.selectionSet, at });
        } else if (expand) {
          const fragment = fragments.get(selection.name.value);
          if (fragment !== undefined) pending.push({ set: fragment.selectionSet, at });
        }
      }
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) count(definition.selectionSet, true);
    else if (definition.kind === Kind.FRAGMENT_DEFINITION) count(definition.selectionSet, false);
  }
  return pairs;
}
