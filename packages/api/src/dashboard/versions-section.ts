/** The workers page's versions section (R54): where each workflow version stands in a deploy. */
import { html, type SafeHtml } from './html';

export interface VersionData {
  readonly name: string;
  readonly version: string | null;
  readonly defined: boolean;
  readonly latest: boolean;
  readonly status: 'SERVING' | 'DRAINING' | 'DRAINED';
  readonly inFlight: number;
  readonly workers: readonly string[];
}

/** What the section reads, beside the workers (GraphQL `definitions`). */
export const versionsSelection =
  'definitions { name version defined latest status inFlight workers }';

/** Status words as the page shows them, with the state colour they borrow. */
const statusLooks: Readonly<Record<VersionData['status'], { word: string; colour: string }>> = {
  SERVING: { word: 'serving', colour: 'running' },
  DRAINING: { word: 'draining', colour: 'waiting' },
  DRAINED: { word: 'drained: safe to delete', colour: 'succeeded' },
};

function row(version: VersionData): SafeHtml {
  const look = statusLooks[version.status];
  return html`<tr data-version="${version.name}@${version.version ?? ''}" data-status="${version.status.toLowerCase()}">
  <th scope="row">${version.name}</th>
  <td><code>${version.version ?? '(before versions)'}</code>${version.latest ? html` <span class="id">latest here</span>` : ''}</td>
  <td><span class="state state-${look.colour}">${look.word}</span></td>
  <td>${String(version.inFlight)}</td>
  <td>${version.workers.length === 0 ? html`<span class="id">none live</span>` : html`<ul class="plain">${version.workers.map((holder) => html`<li><code>${holder}</code></li>`)}</ul>`}</td>
</tr>`;
}

export function renderVersionsSection(versions: readonly VersionData[]): SafeHtml {
  const body =
    versions.length === 0
      ? html`<p>No workflow version is defined, served or in flight.</p>`
      : html`<div class="scroll" tabindex="0" role="region" aria-label="Versions table"><table class="versions">
<caption>Every workflow version: this process's, the live workers', and any with workflows in flight</caption>
<thead><tr><th scope="col">Workflow</th><th scope="col">Version</th><th scope="col">Status</th><th scope="col">In flight</th><th scope="col">Live workers</th></tr></thead>
<tbody>${versions.map(row)}</tbody>
</table></div>`;
  return html`<section data-region="versions" aria-label="Versions"><h2>Versions</h2>${body}</section>`;
}
