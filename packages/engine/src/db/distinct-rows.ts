/**
 * Rows that repeat a few distinct values (a batch's tasks per step, its log rows per edge),
 * as those values once and, per row, the 1-based position of its value. A statement reads
 * them back by array subscript: a submit of a thousand workflows then sends a handful of
 * log-row values instead of thousands of copies, which PostgreSQL would parse one by one.
 */
export interface DistinctRows<Row> {
  readonly values: Row[];
  /** Per row, the position of its value in `values`, from 1 (SQL's arrays start at 1). */
  readonly positions: number[];
}

/**
 * Past this many distinct values a row is not compared any more, only appended: the scan
 * is linear, and a batch has a few kinds of rows, not thousands.
 */
const maxCompared = 64;

/** `rows` as distinct values by `same` (a field-by-field comparison: no key strings to build). */
export function distinctRows<Row>(
  rows: readonly Row[],
  same: (a: Row, b: Row) => boolean,
): DistinctRows<Row> {
  const values: Row[] = [];
  const positions: number[] = [];
  for (const row of rows) {
    let position = 0;
    const compared = Math.min(values.length, maxCompared);
    for (let index = 0; index < compared; index++) {
      if (same(values[index] as Row, row)) {
        position = index + 1;
        break;
      }
    }
    if (position === 0) {
      values.push(row);
      position = values.length;
    }
    positions.push(position);
  }
  return { values, positions };
}
