import type { AttributeValue } from './attributes';

/**
 * One attribute written as text, `key=value`, as the dashboard's filter takes it (the CLI's
 * `--attr` reads it the same way, docs/cli.md). The value's type is read from its text:
 * `true` and `false` are booleans, a JSON number (`5`, `-2.5`, `1e3`) is a number, a JSON
 * string in double quotes (`"5"`, `"true"`) is that string, and anything else is the text as
 * written. So `tier=5` is the number 5 and `tier="5"` the string "5".
 */
export function attributeFromText(
  text: string,
):
  | { readonly ok: true; readonly key: string; readonly value: AttributeValue }
  | { readonly ok: false; readonly problem: string } {
  const at = text.indexOf('=');
  if (at <= 0) return { ok: false, problem: `${JSON.stringify(text)} is not key=value` };
  const key = text.slice(0, at).trim();
  const written = text.slice(at + 1);
  if (written === 'true' || written === 'false')
    return { ok: true, key, value: written === 'true' };
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(written)) {
    return { ok: true, key, value: Number(written) };
  }
  if (written.length >= 2 && written.startsWith('"') && written.endsWith('"')) {
    try {
      return { ok: true, key, value: JSON.parse(written) as string };
    } catch {
      return { ok: false, problem: `${JSON.stringify(written)} is not a JSON string` };
    }
  }
  return { ok: true, key, value: written };
}

/**
 * An attribute as `key=value` text that `attributeFromText` reads back to the same key and
 * value: a string that would read as a number or a boolean (or starts with a quote) is quoted.
 */
export function attributeAsText(key: string, value: AttributeValue): string {
  if (typeof value !== 'string') return `${key}=${JSON.stringify(value)}`;
  const read = attributeFromText(`${key}=${value}`);
  return read.ok && read.value === value ? `${key}=${value}` : `${key}=${JSON.stringify(value)}`;
}
