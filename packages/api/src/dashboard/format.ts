import { html, type SafeHtml } from './html';

/** `2026-05-01 12:00:01 UTC`: the server does not know the reader's zone, so it says which. */
export function timeText(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function millisecondsOf(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? ''
    : `.${String(date.getUTCMilliseconds()).padStart(3, '0')}`;
}

/** A duration as people say it: `850 ms`, `12 s`, `4 min`, `3 h 5 min`, `2 d 4 h`. */
export function durationText(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${Math.round(abs)} ms`;
  const seconds = Math.floor(abs / 1_000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/**
 * A `<time>` element: the full time, the time of day to the millisecond (for a log, whose
 * edges often share a second), or "… ago", which the script keeps current.
 */
export function timeElement(
  iso: string | null,
  now: Date,
  form: 'full' | 'clock' | 'relative' = 'full',
): SafeHtml {
  if (iso === null) return html`<span class="none">—</span>`;
  const full = timeText(iso);
  const text =
    form === 'relative'
      ? relativeText(new Date(iso), now)
      : form === 'clock'
        ? full.slice(11, 19) + millisecondsOf(iso)
        : full;
  return html`<time datetime="${iso}" title="${full}"${form === 'relative' ? html` data-relative="true"` : ''}>${text}</time>`;
}

/** `5 s ago` or `in 3 min`. */
export function relativeText(at: Date, now: Date): string {
  const ms = at.getTime() - now.getTime();
  return ms > 0 ? `in ${durationText(ms)}` : `${durationText(ms)} ago`;
}

/** A state as a badge: its code in words (colour is never the only sign). */
export function stateBadge(state: string): SafeHtml {
  const code = state.toLowerCase();
  return html`<span class="state state-${code}">${code.replaceAll('_', ' ')}</span>`;
}

/** A GraphQL enum value as the domain writes it (`EVENT_RECEIVED` → `event_received`). */
export function code(value: string | null | undefined): string {
  return value === null || value === undefined ? '' : value.toLowerCase();
}

/** The last 8 characters of a uuid: its random part (a v7 id starts with its time). */
export function shortId(id: string): string {
  return id.slice(-8);
}

export function workflowHref(id: string): string {
  return `/workflows/${encodeURIComponent(id)}`;
}
