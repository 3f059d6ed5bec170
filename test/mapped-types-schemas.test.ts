import { graphql, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { describe, expect, it } from 'vitest';
import { FieldTypes } from '../src/graphql/field-types.js';
import { nullable, responseValueSchema } from '../src/openapi/resource-schemas.js';
import { createAjv, fieldJsonSchema } from '../src/schema/field-json-schema.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { resourceNamed, type FieldModel } from '../src/schema/schema-model.js';

/** How the types of a mapped database are described: GraphQL scalars that lose no digit, OpenAPI / JSON Schema that say the JSON form. */

const schema = parseSchemaText(`
database: {existing: true}
resources:
  film:
    key: [film_id]
    fields:
      film_id: {type: integer, generated: byDefault}
      view_count: {type: integer, format: int64}
      rental_rate: {type: decimal, precision: 4, scale: 2}
      tags: {type: json, format: array}
      poster: {type: string, format: base64}
`);
const film = resourceNamed(schema, 'film');
const field = (name: string): FieldModel => {
  const found = film.fields.get(name);
  if (found === undefined) throw new Error(name);
  return found;
};

describe('GraphQL', () => {
  const types = new FieldTypes();
  const bigInt = types.scalarOf(film, field('view_count'));
  const decimal = types.scalarOf(film, field('rental_rate'));

  it('gives int64 fields BigInt and decimals Decimal, sent as strings with every digit', async () => {
    expect(bigInt.name).toBe('BigInt');
    expect(decimal.name).toBe('Decimal');
    const query = new GraphQLObjectType({
      name: 'Query',
      fields: {
        big: { type: new GraphQLNonNull(bigInt), args: { v: { type: new GraphQLNonNull(bigInt) } }, resolve: (_: unknown, args: { v: unknown }) => args.v },
        small: { type: bigInt, resolve: () => 42 },
        dec: { type: new GraphQLNonNull(decimal), args: { v: { type: new GraphQLNonNull(decimal) } }, resolve: (_: unknown, args: { v: unknown }) => args.v },
        echo: { type: GraphQLString, args: { v: { type: bigInt } }, resolve: (_: unknown, args: { v: unknown }) => typeof args.v },
      },
    });
    const result = await graphql({
      schema: new GraphQLSchema({ query }),
      source: '{ big(v: 9223372036854775807) small dec(v: 123456789012345678.91) a: dec(v: "4.50") s: big(v: "-9223372036854775808") echo(v: 5) }',
    });
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ big: '9223372036854775807', small: '42', dec: '123456789012345678.91', a: '4.50', s: '-9223372036854775808', echo: 'string' });
    const bad = await graphql({ schema: new GraphQLSchema({ query }), source: '{ big(v: 1.5) }' });
    expect(bad.errors?.[0]?.message).toMatch(/BigInt/);
  });
});

describe('JSON Schema and OpenAPI', () => {
  const ajv = createAjv({ validateSchema: false });

  it('describes an int64 as a number or a string of digits, a decimal as a string of its precision', () => {
    const int64 = ajv.compile(nullable(responseValueSchema(field('view_count'))));
    for (const ok of [42, '9007199254740993', null]) expect(int64(ok)).toBe(true);
    for (const bad of [1.5, '12a', true]) expect(int64(bad)).toBe(false);
    const rate = ajv.compile(fieldJsonSchema(field('rental_rate')));
    for (const ok of ['4.50', '99.99', '-1', '0.5']) expect(rate(ok)).toBe(true);
    for (const bad of ['100.00', '4.505', '1e3', 4.5]) expect(rate(bad)).toBe(false);
    expect(fieldJsonSchema(field('rental_rate'))).toMatchObject({ type: 'string', format: 'decimal' });
    expect(responseValueSchema(field('poster'))).toEqual({ type: 'string', contentEncoding: 'base64' });
    expect(responseValueSchema(field('tags'))).toEqual({ type: 'array' });
  });

  it('keeps these words for mapped schemas: an unmapped schema refuses them', () => {
    for (const type of ['{type: integer, format: int64}', '{type: decimal}', '{type: json, format: array}', '{type: string, format: base64}', '{type: time}']) {
      expect(() => parseSchemaText(`resources:\n  films:\n    fields:\n      f: ${type}\n`)).toThrow(/existing database/);
    }
  });
});
