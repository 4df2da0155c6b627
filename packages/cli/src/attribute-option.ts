import type { Invocation } from './command';
import { usageError } from './exit-codes';

/**
 * `--attr key=value` (repeatable) as the API's `attributes` object (R55), or null when not
 * given. A value's type is read from its text, as the dashboard's filter reads it: `true` and
 * `false` are booleans, a JSON number (`5`, `-2.5`, `1e3`) is a number, a JSON string in
 * double quotes (`"5"`) is that string, anything else is the text as written. Bounds (keys,
 * lengths, at most 16) are the server's to check, so the CLI and the API refuse alike.
 */
export function attributesOption(invocation: Invocation): Record<string, unknown> | null {
  const texts = invocation.options('attr');
  if (texts.length === 0) return null;
  const attributes: Record<string, unknown> = {};
  for (const text of texts) {
    const at = text.indexOf('=');
    if (at <= 0) throw usageError(`--attr must be key=value, got ${JSON.stringify(text)}`);
    const key = text.slice(0, at);
    if (Object.hasOwn(attributes, key)) throw usageError(`--attr gives ${key} twice`);
    attributes[key] = typedValue(text.slice(at + 1));
  }
  return attributes;
}

const numberText = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

function typedValue(text: string): unknown {
  if (text === 'true' || text === 'false') return text === 'true';
  if (numberText.test(text)) return Number(text);
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      return JSON.parse(text) as string;
    } catch {
      throw usageError(`--attr value ${text} is not a JSON string`);
    }
  }
  return text;
}

/** Attributes as `status` shows them: `key=value`, strings that would read otherwise quoted. */
export function attributesText(attributes: Readonly<Record<string, unknown>>): string {
  return Object.entries(attributes)
    .map(([key, value]) =>
      typeof value === 'string' && readsAsText(value)
        ? `${key}=${value}`
        : `${key}=${JSON.stringify(value)}`,
    )
    .join('  ');
}

/** Whether `--attr key=<text>` reads `text` as this very string. */
function readsAsText(text: string): boolean {
  return text !== 'true' && text !== 'false' && !numberText.test(text) && !text.startsWith('"');
}
