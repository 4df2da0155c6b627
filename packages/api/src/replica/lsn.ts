/**
 * Log sequence numbers as PostgreSQL prints them (`16/B374D848`: two hex halves of a 64-bit
 * byte position in the WAL), compared as numbers.
 */
const lsnPattern = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/** The byte position of an LSN, or null when there is none or the text is not one. */
export function parseLsn(text: string | null): bigint | null {
  if (text === null) return null;
  const match = lsnPattern.exec(text.trim());
  if (match === null) return null;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/**
 * The later of two positions. Text that is not a position is kept over a valid one, so that
 * it reaches the router and is refused there (BAD_USER_INPUT) instead of being dropped.
 */
export function laterLsn(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  const [first, second] = [parseLsn(a), parseLsn(b)];
  if (first === null) return a;
  if (second === null) return b;
  return first >= second ? a : b;
}
