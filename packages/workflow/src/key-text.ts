/**
 * Why Postgres cannot store this text, or null: JSONB and text reject `\u0000`, and lone
 * UTF-16 surrogates have no UTF-8 form.
 */
export function textStorageProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'a NUL character (\\u0000)';
  if (!text.isWellFormed()) return 'a lone UTF-16 surrogate';
  return null;
}

/**
 * What is wrong with a key a caller or a key function gave (`label` names it, e.g. "the
 * idempotency key"), or null: a non-empty string of at most `maxLength` characters that
 * Postgres can store.
 */
export function keyTextProblem(label: string, key: unknown, maxLength: number): string | null {
  if (typeof key !== 'string') return `${label} must be a string`;
  if (key.length === 0) return `${label} is empty`;
  if (key.length > maxLength)
    return `${label} is ${key.length} characters, over the limit of ${maxLength}`;
  const unstorable = textStorageProblem(key);
  if (unstorable !== null) return `${label} has ${unstorable}`;
  return null;
}
