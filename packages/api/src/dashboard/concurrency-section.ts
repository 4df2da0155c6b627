/**
 * The queues page's "Concurrency keys" section (R50): each group with its limit and steps, its
 * busiest keys with held/limit and ready tasks, and the tasks holding each key, linked to their
 * workflows.
 */
import { shortId, stateBadge, timeElement, workflowHref } from './format';
import { html, type SafeHtml } from './html';

/** How many of each group's busiest keys the page shows. */
export const keysShown = 10;

export const concurrencyGroupsFields = `concurrencyGroups(keys: ${keysShown}) {
    name limit defined steps keysBusy held queued
    keys {
      key limit held queued
      holders { taskId workflowId step state leaseHolder since }
    }
  }`;

interface HolderData {
  readonly taskId: string;
  readonly workflowId: string;
  readonly step: string;
  readonly state: string;
  readonly leaseHolder: string | null;
  readonly since: string;
}

interface KeyData {
  readonly key: string;
  readonly limit: number | null;
  readonly held: number;
  readonly queued: number;
  readonly holders: readonly HolderData[];
}

export interface ConcurrencyGroupData {
  readonly name: string;
  readonly limit: number;
  readonly defined: boolean;
  readonly steps: readonly string[];
  readonly keysBusy: number;
  readonly held: number;
  readonly queued: number;
  readonly keys: readonly KeyData[];
}

function holderItem(holder: HolderData, now: Date): SafeHtml {
  return html`<li><a href="${workflowHref(holder.workflowId)}">workflow ${shortId(holder.workflowId)}</a> ${holder.step} ${stateBadge(holder.state)}${holder.leaseHolder === null ? '' : html` on <code>${holder.leaseHolder}</code>`} ${timeElement(holder.since, now, 'relative')}</li>`;
}

function keyRow(group: ConcurrencyGroupData, key: KeyData, now: Date): SafeHtml {
  const limit = key.limit ?? group.limit;
  return html`<tr data-key="${key.key}">
  <th scope="row"><code>${key.key}</code></th>
  <td class="held">${key.held}/${limit}</td>
  <td class="queued">${key.queued}</td>
  <td>${key.holders.length === 0 ? 'none' : html`<ul class="holders">${key.holders.map((holder) => holderItem(holder, now))}</ul>`}</td>
</tr>`;
}

function groupBlock(group: ConcurrencyGroupData, now: Date): SafeHtml {
  const steps = group.steps.length === 0 ? 'no step of this engine' : group.steps.join(', ');
  const summary = `limit ${group.limit} per key; ${group.keysBusy} key${group.keysBusy === 1 ? '' : 's'} busy, ${group.held} slot${group.held === 1 ? '' : 's'} held, ${group.queued} ready task${group.queued === 1 ? '' : 's'} waiting`;
  const more =
    group.keysBusy > group.keys.length
      ? html`<p>The ${group.keys.length} busiest of ${group.keysBusy} keys.</p>`
      : html``;
  const keys =
    group.keys.length === 0
      ? html`<p>No key is busy.</p>`
      : html`<div class="scroll" tabindex="0" role="region" aria-label="Keys of ${group.name}"><table class="concurrency-keys">
<caption>Busiest keys of ${group.name}</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Held/limit</th><th scope="col">Ready</th><th scope="col">Holders</th></tr></thead>
<tbody>${group.keys.map((key) => keyRow(group, key, now))}</tbody>
</table></div>${more}`;
  return html`<article data-group="${group.name}">
<h3>${group.name}${group.defined ? '' : ' (not defined by this engine)'}</h3>
<p class="group-summary">${summary}. Steps: ${steps}.</p>
${keys}
</article>`;
}

export function renderConcurrencySection(
  groups: readonly ConcurrencyGroupData[],
  now: Date,
): SafeHtml {
  const content =
    groups.length === 0
      ? html`<p>No step declares a concurrency key, and no key is busy.</p>`
      : html`${groups.map((group) => groupBlock(group, now))}`;
  return html`<section data-region="concurrency" aria-label="Concurrency keys">
<h2>Concurrency keys</h2>
${content}
</section>`;
}
