/**
 * The queues page's "Rate limits" section (R51): each limit the engine declares with its limit
 * per period, what its keys spent within the period and how many no grant fits now, and its
 * busiest keys with their next slot or pause; a pause links to the workflow whose step paused
 * the key, while it is stored.
 */
import { durationText, shortId, timeElement, workflowHref } from './format';
import { html, type SafeHtml } from './html';

/** How many of each limit's busiest keys the page shows. */
export const rateKeysShown = 10;

export const rateLimitsFields = `rateLimits(keysPerLimit: ${rateKeysShown}) {
    name limit periodMs keys spent limitedKeys
    busiest { key spent nextSlotAt pausedUntil pausedByTask pausedByWorkflow pausedReason }
  }`;

interface RateKeyData {
  readonly key: string | null;
  readonly spent: number;
  readonly nextSlotAt: string | null;
  readonly pausedUntil: string | null;
  readonly pausedByTask: string | null;
  readonly pausedByWorkflow: string | null;
  readonly pausedReason: string | null;
}

export interface RateLimitData {
  readonly name: string;
  readonly limit: number;
  readonly periodMs: number;
  readonly keys: number;
  readonly spent: number;
  readonly limitedKeys: number;
  readonly busiest: readonly RateKeyData[];
}

function pauseCell(key: RateKeyData, now: Date): SafeHtml {
  if (key.pausedUntil === null) return html`<span class="none">—</span>`;
  const by =
    key.pausedByWorkflow !== null
      ? html` by a step of <a href="${workflowHref(key.pausedByWorkflow)}">workflow ${shortId(key.pausedByWorkflow)}</a>`
      : key.pausedByTask === null
        ? html``
        : html` by task <code>${shortId(key.pausedByTask)}</code>`;
  return html`until ${timeElement(key.pausedUntil, now)}${by}${key.pausedReason === null ? '' : html`: ${key.pausedReason}`}`;
}

function keyRow(limit: RateLimitData, key: RateKeyData, now: Date): SafeHtml {
  return html`<tr data-key="${key.key ?? ''}">
  <th scope="row">${key.key === null ? 'the one bucket' : html`<code>${key.key}</code>`}</th>
  <td class="spent">${key.spent}/${limit.limit}</td>
  <td class="next-slot">${key.nextSlotAt === null ? 'now' : timeElement(key.nextSlotAt, now)}</td>
  <td class="paused">${pauseCell(key, now)}</td>
</tr>`;
}

function limitBlock(limit: RateLimitData, now: Date): SafeHtml {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const summary = `${limit.limit} per ${durationText(limit.periodMs)} per key; ${limit.spent} spent within the period over ${plural(limit.keys, 'key')}, ${limit.limitedKeys} limited now`;
  const more =
    limit.keys > limit.busiest.length
      ? html`<p>The ${limit.busiest.length} busiest of ${limit.keys} keys.</p>`
      : html``;
  const keys =
    limit.busiest.length === 0
      ? html`<p>No key spent within the period, and none is paused.</p>`
      : html`<div class="scroll" tabindex="0" role="region" aria-label="Keys of ${limit.name}"><table class="rate-keys">
<caption>Busiest keys of ${limit.name}</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Spent/limit</th><th scope="col">Next slot</th><th scope="col">Paused</th></tr></thead>
<tbody>${limit.busiest.map((key) => keyRow(limit, key, now))}</tbody>
</table></div>${more}`;
  return html`<article data-rate-limit="${limit.name}">
<h3>${limit.name}</h3>
<p class="rate-summary">${summary}.</p>
${keys}
</article>`;
}

export function renderRateLimitSection(limits: readonly RateLimitData[], now: Date): SafeHtml {
  const content =
    limits.length === 0
      ? html`<p>The engine declares no rate limit.</p>`
      : html`${limits.map((limit) => limitBlock(limit, now))}`;
  return html`<section data-region="rate-limits" aria-label="Rate limits">
<h2>Rate limits</h2>
${content}
</section>`;
}
