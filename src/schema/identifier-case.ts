import type { AccountsModel } from './accounts-model.js';
import type { ResourceModel } from './schema-model.js';

/**
 * Email identifiers are compared ignoring case (docs/accounts.md#the-schema): `Ann@Example.com`
 * and `ann@example.com` are one account. They are stored folded, on every write of the field
 * (REST, GraphQL, sign-up, OpenID Connect, import: all go through the record validator), and
 * looked up folded, so that the field's unique index keeps one account per address and a
 * sign-in is one indexed equality.
 */
export function foldsIdentifierCase(accounts: AccountsModel | undefined, resources: ReadonlyMap<string, ResourceModel>): boolean {
  if (accounts === undefined) return false;
  return resources.get(accounts.resource)?.fields.get(accounts.identifier)?.format === 'email';
}

/** The fields whose values are stored case-folded, by resource: the accounts' email identifier, if any. */
export function caseFoldedFields(schema: { accounts?: AccountsModel | undefined; resources: ReadonlyMap<string, ResourceModel> }): ReadonlyMap<string, ReadonlySet<string>> {
  const { accounts } = schema;
  if (accounts === undefined || !foldsIdentifierCase(accounts, schema.resources)) return new Map();
  return new Map([[accounts.resource, new Set([accounts.identifier])]]);
}

/**
 * The stored form of an email identifier: lower case (Unicode's default mapping, the same as the
 * case folding of filters). RFC 5321 lets a mail server tell `Ann` from `ann` in the local part;
 * no widely used one does, and an account system that did would let two people hold one mailbox.
 */
export function foldIdentifier(value: string): string {
  return value.toLowerCase();
}
