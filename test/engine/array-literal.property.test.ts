import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ArrayElement,
  arrayLiteral,
  constantArrayLiteral,
} from '../../packages/engine/src/db/array-literal';
import { useTestDatabase } from '../helpers/database';

/**
 * The engine sends large batches as array literals it builds itself: PostgreSQL must read
 * back exactly the values that went in, whatever the text (quotes, backslashes, braces,
 * commas, whitespace, the word NULL, empty strings, any Unicode) and however many there are.
 */
const database = useTestDatabase();
let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: database().url });
  await client.connect();
});
afterAll(async () => {
  await client.end();
});

const awkward = fc.constantFrom(
  '',
  'NULL',
  'null',
  ' ',
  '"',
  '\\',
  '\\"',
  '{',
  '}',
  ',',
  '{a,b}',
  ' x ',
  '\t\n',
  'é',
  '𝄞',
);
// PostgreSQL text cannot hold NUL.
const text = fc
  .oneof(awkward, fc.string({ unit: 'grapheme' }), fc.string())
  .map((value) => value.replaceAll('\u0000', ''));

async function roundTrip(values: readonly ArrayElement[], type: string): Promise<unknown[]> {
  const { rows } = await client.query(`select $1::${type}[] as value`, [arrayLiteral(values)]);
  return rows[0].value;
}

describe('array literals', () => {
  it('read back as the same text values, in order, with nulls', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(text, { nil: null }), { maxLength: 40 }),
        async (values) => {
          expect(await roundTrip(values, 'text')).toEqual(values);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('read back as the same integers, booleans and uuids', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(fc.integer(), { nil: null }), { maxLength: 20 }),
        fc.array(fc.option(fc.boolean(), { nil: null }), { maxLength: 20 }),
        fc.array(fc.uuid(), { maxLength: 20 }),
        async (integers, booleans, uuids) => {
          expect(await roundTrip(integers, 'integer')).toEqual(integers);
          expect(await roundTrip(booleans, 'boolean')).toEqual(booleans);
          expect(await roundTrip(uuids, 'uuid')).toEqual(uuids);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('of a constant array is made once per array object and is the same text', () => {
    const constant = ['queued', 'a "quoted" \\ state', null];
    expect(constantArrayLiteral(constant)).toBe(arrayLiteral(constant));
    expect(constantArrayLiteral(constant)).toBe(constantArrayLiteral(constant));
    expect(constantArrayLiteral(['other'])).toBe('{"other"}');
  });

  it('is an empty array for no values', async () => {
    expect(arrayLiteral([])).toBe('{}');
    expect(await roundTrip([], 'text')).toEqual([]);
  });
});
