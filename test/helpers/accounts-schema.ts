/**
 * A schema with accounts (docs/accounts.md): users sign up with email and password, see and change
 * only themselves, may not give themselves a role; notes belong to the user who writes them.
 */
export const ACCOUNTS_SCHEMA = `
accounts: { resource: users, identifier: email, signUp: open, claims: [role, orgId] }
resources:
  users:
    access: { read: authenticated, create: [users:admin], update: authenticated, delete: [users:admin] }
    rules:
      list: "id = @auth.sub"
      update: "id = @auth.sub"
    fields:
      email: { type: string, format: email, required: true, unique: true }
      name: { type: string }
      role: { type: enum, values: [member, admin], default: member, write: [users:admin] }
      orgId: { type: string }
  notes:
    access: { read: authenticated, write: authenticated }
    rules:
      list: "ownerId = @auth.sub"
      update: "ownerId = @auth.sub"
      delete: "ownerId = @auth.sub"
    set: { ownerId: "@auth.sub" }
    fields:
      ownerId: { type: integer, references: users }
      text: { type: string }
`;

/** The same schema with sign-up set to `policy`. */
export function accountsSchemaWith(policy: 'open' | 'closed' | 'invite'): string {
  return ACCOUNTS_SCHEMA.replace('signUp: open', `signUp: ${policy}`);
}
