/**
 * A pattern for an operator sentence whose times vary: the text is literal except `<time>` (a
 * time as the sentences write it: HH:MM:SS in UTC, with weekday and date when on another day
 * than the read) and `<n>` (a whole number).
 */
export function sentence(template: string): RegExp {
  const escaped = template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${escaped
      .replaceAll('<time>', String.raw`(?:\w{3} \d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d`)
      .replaceAll('<n>', String.raw`\d+`)}$`,
  );
}
