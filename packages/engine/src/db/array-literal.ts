import { type RawBuilder, sql } from 'kysely';

/** A value of a one-dimensional array parameter: text, uuid, a number or a boolean. */
export type ArrayElement = string | number | boolean | null;

/**
 * The text of a PostgreSQL array literal (`{"a","b",NULL}`), sent as a string parameter with
 * a cast (`$1::text[]`). `pg` builds the same text when it sends an array, but with two
 * regular-expression replaces per element, which a submit of thousands of rows feels. Strings are always quoted, so `NULL`, empty strings, braces, commas
 * and whitespace keep their meaning; only `\` and `"` are escaped.
 */
export function arrayLiteral(values: readonly ArrayElement[]): string {
  let text = '{';
  for (let index = 0; index < values.length; index++) {
    if (index > 0) text += ',';
    const value = values[index];
    if (value === null || value === undefined) {
      text += 'NULL';
    } else if (typeof value === 'string') {
      text +=
        value.includes('\\') || value.includes('"')
          ? `"${value.replace(/[\\"]/g, '\\$&')}"`
          : `"${value}"`;
    } else {
      text += String(value);
    }
  }
  return `${text}}`;
}

const literalsOfConstants = new WeakMap<readonly ArrayElement[], string>();

/**
 * `arrayLiteral` for an array that never changes (the machine's edges and the step table the
 * one-statement claim and settle send on every call), made once per array object: sent as an
 * array, `pg` would serialize every element again on every call.
 */
export function constantArrayLiteral(values: readonly ArrayElement[]): string {
  let literal = literalsOfConstants.get(values);
  if (literal === undefined) {
    literal = arrayLiteral(values);
    literalsOfConstants.set(values, literal);
  }
  return literal;
}

const sqlOfConstants = new WeakMap<readonly ArrayElement[], Map<string, RawBuilder<unknown>>>();

/**
 * An array that never changes, written into the statement's text as a typed literal
 * (`'{"a","b"}'::text[]`) instead of sent as a parameter: a named prepared statement then
 * parses it once per connection, and its plan holds it as a constant, where a parameter is
 * parsed again at every execution and is a value of unknown length to the plan.
 */
export function constantArraySql(
  values: readonly ArrayElement[],
  type: 'text' | 'integer' | 'jsonb',
): RawBuilder<unknown> {
  let byType = sqlOfConstants.get(values);
  if (byType === undefined) {
    byType = new Map();
    sqlOfConstants.set(values, byType);
  }
  let raw = byType.get(type);
  if (raw === undefined) {
    raw = typedConstantSql(arrayLiteral(values), `${type}[]`);
    byType.set(type, raw);
  }
  return raw;
}

/**
 * A constant's text as a typed literal in a statement (`E'…'::jsonb`): an escape string, so
 * that its backslashes mean the same whatever standard_conforming_strings says.
 */
export function typedConstantSql(text: string, type: string): RawBuilder<unknown> {
  return sql.raw(`E'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'::${type}`);
}
