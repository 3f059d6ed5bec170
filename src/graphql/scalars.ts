import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

/**
 * Custom scalars of the generated schema. Inputs are only checked for their GraphQL shape here;
 * the core's validator applies the field's own rules (and names the field when they fail).
 */

export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'An instant as an ISO 8601 / RFC 3339 string, e.g. 2026-01-31T12:00:00.000Z.',
  serialize: (value) => String(value),
  parseValue: (value) => stringInput('DateTime', value),
  parseLiteral: (ast) => stringLiteral('DateTime', ast),
});

export const DateScalar = new GraphQLScalarType<string, string>({
  name: 'Date',
  description: 'A calendar date as YYYY-MM-DD.',
  serialize: (value) => String(value),
  parseValue: (value) => stringInput('Date', value),
  parseLiteral: (ast) => stringLiteral('Date', ast),
});

/** Integers beyond GraphQL's 32-bit Int: JavaScript's safe integers (up to 2^53 - 1 either way). */
export const SafeIntScalar = new GraphQLScalarType<number, number>({
  name: 'SafeInt',
  description: 'An integer from -(2^53 - 1) to 2^53 - 1 (GraphQL Int stops at 2^31 - 1).',
  serialize: (value) => {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
    if (typeof value === 'bigint' && value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)) return Number(value);
    throw new GraphQLError(`SafeInt cannot represent ${String(value)}`);
  },
  parseValue: (value) => {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
    throw new GraphQLError(`SafeInt must be an integer from -(2^53 - 1) to 2^53 - 1; got ${JSON.stringify(value)}`);
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT) {
      const n = Number(ast.value);
      if (Number.isSafeInteger(n)) return n;
    }
    throw new GraphQLError('SafeInt must be an integer from -(2^53 - 1) to 2^53 - 1', { nodes: ast });
  },
});

/**
 * A mapped database's bigint (int64 fields): its digits as a string, as PostGraphile's BigInt and
 * Hasura's bigint (as a string) send it, so that no client rounds it to a double. Takes a string of
 * digits, or an integer (a literal of any size, a variable's number within 2^53).
 */
export const BigIntScalar = new GraphQLScalarType<string | number, string>({
  name: 'BigInt',
  description: 'A 64-bit integer, as a string of digits ("9007199254740993"); given as a string or an integer.',
  serialize: (value) => {
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    if (typeof value === 'bigint' || (typeof value === 'string' && /^-?\d+$/.test(value))) return String(value);
    throw new GraphQLError(`BigInt cannot represent ${String(value)}`);
  },
  parseValue: (value) => {
    if ((typeof value === 'number' && Number.isSafeInteger(value)) || (typeof value === 'string' && /^-?\d{1,19}$/.test(value))) return value;
    throw new GraphQLError(`BigInt must be a string of digits, or an integer within 2^53; got ${JSON.stringify(value)}`);
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT) return ast.value;
    if (ast.kind === Kind.STRING && /^-?\d{1,19}$/.test(ast.value)) return ast.value;
    throw new GraphQLError('BigInt must be a string of digits or an integer', { nodes: ast });
  },
});

/**
 * A mapped database's numeric (decimal fields): its text, every digit kept (PostGraphile's
 * BigFloat, Hasura's numeric sent as a string). Takes a string, or a number literal as written
 * (`12.50`: its text, not a double).
 */
export const DecimalScalar = new GraphQLScalarType<string | number, string>({
  name: 'Decimal',
  description: 'An exact decimal number as a string ("123456789012345678.91"); given as a string or a number.',
  serialize: (value) => {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') return String(value);
    throw new GraphQLError(`Decimal cannot represent ${String(value)}`);
  },
  parseValue: (value) => {
    if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) return value;
    throw new GraphQLError(`Decimal must be a string or a number; got ${JSON.stringify(value)}`);
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT || ast.kind === Kind.FLOAT || ast.kind === Kind.STRING) return ast.value;
    throw new GraphQLError('Decimal must be a string or a number', { nodes: ast });
  },
});

/** Any JSON value (json fields). */
export const JsonScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => jsonLiteral(ast, variables ?? undefined),
});

function stringInput(name: string, value: unknown): string {
  if (typeof value !== 'string') throw new GraphQLError(`${name} must be a string; got ${JSON.stringify(value)}`);
  return value;
}

function stringLiteral(name: string, ast: ValueNode): string {
  if (ast.kind !== Kind.STRING) throw new GraphQLError(`${name} must be a string`, { nodes: ast });
  return ast.value;
}

function jsonLiteral(ast: ValueNode, variables: Record<string, unknown> | undefined): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.ENUM:
      return ast.value;
    case Kind.LIST:
      return ast.values.map((v) => jsonLiteral(v, variables));
    case Kind.OBJECT: {
      // A null-prototype object: keys like __proto__ stay plain data.
      const out = Object.create(null) as Record<string, unknown>;
      for (const field of ast.fields) out[field.name.value] = jsonLiteral(field.value, variables);
      return out;
    }
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
  }
}
