/**
 * A schema for aggregate tests: orders with a field of every groupable and aggregatable type (and a
 * json one), customers with many orders, a resource named \`aggregate\`, and owner-ruled notes.
 */
export const AGGREGATE_SCHEMA = `
versions: [v1, v2]
resources:
  customers:
    access: { read: public, write: public }
    fields:
      name: { type: string }
    relations:
      orders: { hasMany: orders, foreignKey: customerId }
  orders:
    access: { read: public, write: public }
    fields:
      batch:      { type: integer }
      status:     { type: enum, values: [pending, paid, shipped] }
      total:      { type: number }
      qty:        { type: integer }
      paid:       { type: boolean }
      day:        { type: date }
      at:         { type: datetime }
      note:       { type: string }
      extra:      { type: json }
      customerId: { type: integer, references: customers }
    relations:
      customer: { belongsTo: customers, foreignKey: customerId }
  aggregate:
    singular: aggregateItem
    access: { read: public, write: public }
    fields:
      label: { type: string }
  notes:
    access: { read: authenticated, write: authenticated }
    owner: author
    fields:
      author: { type: string }
      amount: { type: integer }
`;
