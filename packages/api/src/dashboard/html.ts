/**
 * HTML built from templates whose every interpolated value is escaped: workflow data (inputs,
 * outputs, error messages, event payloads, a name in the query string) can never become
 * markup. Only another `html` result (SafeHtml) is inserted as is.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** A value a template may interpolate: text (escaped), markup made by `html`, or lists of them. */
export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | HtmlList;
interface HtmlList extends ReadonlyArray<HtmlValue> {}

const entities: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for an element's content and for a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => entities[character] as string);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  // null, undefined and false render nothing, so `${cond && html`…`}` reads naturally.
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** The template tag: `html\`<td>${name}</td>\`` escapes `name`. Attributes must be quoted. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** Any JSON value, pretty-printed as escaped text (for `<pre>`). */
export function jsonText(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2) ?? '';
}
