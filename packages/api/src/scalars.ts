import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function parseDate(value: unknown): Date {
  if (typeof value !== 'string' || !isoPattern.test(value)) {
    throw new GraphQLError(
      'DateTime must be an ISO 8601 string with a time zone, e.g. 2026-05-01T10:00:00Z',
    );
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime()))
    throw new GraphQLError(`DateTime ${JSON.stringify(value)} is not a valid date`);
  return date;
}

/** ISO 8601 timestamps with a time zone; database time, sent as UTC. */
export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  serialize(value) {
    if (value instanceof Date) return value.toISOString();
    if (typeof value === 'string') return parseDate(value).toISOString();
    throw new GraphQLError('DateTime cannot represent a non-date value');
  },
  parseValue: parseDate,
  parseLiteral(node) {
    if (node.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string');
    return parseDate(node.value);
  },
});

/** Any JSON value (objects, arrays, strings, numbers, booleans, null). */
export const JSONScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (node, variables) => literalValue(node, variables ?? undefined),
});

function literalValue(node: ValueNode, variables: Record<string, unknown> | undefined): unknown {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.NULL:
      return null;
    case Kind.ENUM:
      return node.value;
    case Kind.LIST:
      return node.values.map((item) => literalValue(item, variables));
    case Kind.OBJECT:
      return Object.fromEntries(
        node.fields.map((field) => [field.name.value, literalValue(field.value, variables)]),
      );
    case Kind.VARIABLE:
      return variables?.[node.name.value];
  }
}
