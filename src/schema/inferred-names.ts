import pluralize from 'pluralize';
import { FIELD_NAMED_QUERY_PARAMETERS, RESERVED_QUERY_PARAMETERS, RESERVED_RESOURCE_NAMES } from './schema-model.js';

/**
 * Names for a schema inferred from data (`restgraph serve db.json`): the keys of the data become
 * resource and field names, renamed when restgraph cannot take them as they are. Renaming is
 * deterministic (the same file gives the same names) and every rename says why.
 */

const FIELD_NAME = /^[A-Za-z][A-Za-z0-9]{0,62}$/;
const RESOURCE_NAME = /^[a-z][A-Za-z0-9]{0,62}$/;
/** Fields every resource has; data under these names is renamed (createdAt and updatedAt may instead fill them). */
export const SYSTEM_FIELD_NAMES: readonly string[] = ['id', 'createdAt', 'updatedAt'];

export interface ChosenName {
  name: string;
  /** Why the name differs from the key, when it does. */
  renamed?: string;
}

/**
 * A field name for the key `key`, unused in `taken` (which it joins).
 * `first-name` → `firstName`, `_private` → `private`, `123` → `field123`, `sort` → `sortValue`.
 */
export function fieldNameFor(key: string, taken: Set<string>): ChosenName {
  let name = camelCase(key);
  let why: string | undefined = name === key ? undefined : 'a field name has only letters and digits and starts with a letter';
  if (name === '') {
    name = 'field';
    why = 'a field name has only letters and digits and starts with a letter';
  } else if (!/^[A-Za-z]/.test(name)) {
    name = `field${name}`;
    why = 'a field name starts with a letter';
  }
  // A data key named like a parameter reserved later keeps its name: the schema inferred from an
  // existing file stays the one its database was migrated to.
  if (RESERVED_QUERY_PARAMETERS.includes(name) && !FIELD_NAMED_QUERY_PARAMETERS.includes(name)) {
    name = `${name}Value`;
    why = `"${key}" is a query parameter of lists`;
  } else if (SYSTEM_FIELD_NAMES.includes(name)) {
    name = `original${capitalize(name)}`;
    why = `"${key}" is a field restgraph sets itself`;
  }
  return unique(key, name.slice(0, 63), why, taken, FIELD_NAME);
}

/** A resource name for the top-level key `key`, unused in `taken` (which it joins). */
export function resourceNameFor(key: string, taken: Set<string>): ChosenName {
  let name = camelCase(key);
  let why: string | undefined = name === key ? undefined : 'a resource name has only letters and digits and starts with a lowercase letter';
  if (!/^[A-Za-z]/.test(name)) {
    name = `items${name}`;
    why = 'a resource name starts with a lowercase letter';
  }
  name = name.charAt(0).toLowerCase() + name.slice(1);
  if (RESERVED_RESOURCE_NAMES.includes(name) || /^v[0-9]+$/.test(name) || name.startsWith('_')) {
    name = `${pluralize.singular(name)}Items`;
    why = `/${key} is a path restgraph serves itself`;
  }
  if (why === undefined && name !== key) why = 'a resource name starts with a lowercase letter';
  return unique(key, name.slice(0, 63), why, taken, RESOURCE_NAME);
}

/** The singular of a collection's name, when restgraph cannot derive it (`news` → `newsItem`). */
export function singularFor(resource: string): string | undefined {
  const singular = pluralize.singular(resource);
  if (singular !== resource && RESOURCE_NAME.test(singular)) return undefined;
  return `${resource}Item`.slice(0, 63);
}

function unique(key: string, base: string, why: string | undefined, taken: Set<string>, pattern: RegExp): ChosenName {
  let name = base;
  for (let n = 2; taken.has(name.toLowerCase()) || !pattern.test(name); n++) {
    name = `${base.slice(0, 60)}${n}`;
    why ??= `"${base}" is taken`;
  }
  taken.add(name.toLowerCase());
  return why === undefined ? { name } : { name, renamed: why };
}

/** `first-name`, `first_name`, `FIRST NAME`, `_private` → `firstName`, `FIRSTNAME`-style words lowered. */
function camelCase(key: string): string {
  if (FIELD_NAME.test(key)) return key;
  const words = key.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return words
    .map((word, i) => {
      const lowered = word === word.toUpperCase() ? word.toLowerCase() : word;
      return i === 0 ? lowered : capitalize(lowered);
    })
    .join('');
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
