import { visibleLength } from './style';

/**
 * A plain aligned table: a header row, then one row per item, columns separated by two spaces,
 * the last column unpadded (so a long message does not push trailing blanks). Cells are text
 * already styled; alignment counts only what is visible.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(visibleLength(title), ...rows.map((row) => visibleLength(row[column] ?? ''))),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1
          ? cell
          : cell + ' '.repeat((widths[column] ?? 0) - visibleLength(cell)),
      )
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** `key: value` lines with the values aligned. */
export function fields(entries: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...entries.map(([key]) => key.length));
  return entries.map(([key, value]) => `${`${key}:`.padEnd(width + 1)}  ${value}`).join('\n');
}
