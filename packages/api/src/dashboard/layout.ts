import { html, type SafeHtml } from './html';

/** Which stream of transitions a page follows, if any. */
export type LiveMode =
  | { readonly kind: 'none' }
  | { readonly kind: 'workflows' }
  | { readonly kind: 'workflow'; readonly workflowId: string };

export interface PageShell {
  readonly title: string;
  /** The navigation entry this page belongs to. */
  readonly section: 'workflows' | 'schedules' | 'queues' | 'workers' | 'none';
  readonly live: LiveMode;
  /** The transition id up to which the page's data is current: the stream resumes after it. */
  readonly after: bigint;
  readonly endpoint: string;
  readonly body: SafeHtml;
}

const sections = [
  { key: 'workflows', href: '/', label: 'Workflows' },
  { key: 'schedules', href: '/schedules', label: 'Schedules' },
  { key: 'queues', href: '/queues', label: 'Queues' },
  { key: 'workers', href: '/workers', label: 'Workers' },
] as const;

/** The page around every view: navigation, the operator token, live status, announcements. */
export function renderPage(page: PageShell): SafeHtml {
  const workflowId = page.live.kind === 'workflow' ? page.live.workflowId : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Causeway</title>
<link rel="icon" href="/dashboard/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/dashboard.css">
<link rel="stylesheet" href="/dashboard/states.css">
<script type="module" src="/dashboard/dashboard.js"></script>
</head>
<body data-live="${page.live.kind}" data-live-workflow="${workflowId}" data-after="${page.after.toString()}" data-endpoint="${page.endpoint}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <p class="brand"><a href="/">Causeway</a></p>
  <nav aria-label="Sections"><ul>
    ${sections.map(
      (section) =>
        html`<li><a href="${section.href}"${section.key === page.section ? html` aria-current="page"` : ''}>${section.label}</a></li>`,
    )}
  </ul></nav>
  <form id="token-form" class="token" method="post" autocomplete="off">
    <label for="token-input">Token</label>
    <input id="token-input" name="token" type="password" spellcheck="false" aria-describedby="token-state">
    <button type="submit">Sign in</button>
    <button type="button" id="token-forget">Sign out</button>
    <span id="token-state" class="token-state" role="status">Not signed in: actions are refused.</span>
  </form>
  <p id="live-state" class="live-state" role="status">${page.live.kind === 'none' ? 'Not live' : 'Connecting…'}</p>
</header>
<main id="main" tabindex="-1">
<p id="outcome" class="outcome" role="status"></p>
${page.body}
</main>
<div id="announcements" class="visually-hidden" aria-live="polite" aria-atomic="false"></div>
</body>
</html>
`;
}

/**
 * A page-level problem shown in place of the data (e.g. the API refused the read). A read
 * refused for want of a token shows the sign-in form: the script keeps the token for the tab
 * and loads the page's data with it.
 */
export function renderProblem(code: string, message: string, hint?: string): SafeHtml {
  const needsToken = code === 'UNAUTHENTICATED';
  return html`<div class="problem" role="alert"${needsToken ? html` data-needs-token="true"` : ''}>
  <p><strong class="code">${code}</strong> ${message}</p>
  ${hint === undefined ? '' : html`<p>${hint}</p>`}
</div>
${needsToken ? signInForm : ''}`;
}

// POST, so that a submit without the script never puts the token in a URL.
const signInForm = html`<form class="sign-in" method="post" data-sign-in autocomplete="off" aria-labelledby="sign-in-title">
  <h2 id="sign-in-title">Sign in</h2>
  <p>This server's reads need a token. It is kept for this tab only (a reload keeps it; closing the tab or signing out drops it) and sent as a header with every request.</p>
  <label for="sign-in-token">Token</label>
  <input id="sign-in-token" name="token" type="password" required spellcheck="false">
  <button type="submit">Sign in</button>
  <p class="sign-in-error" data-sign-in-error role="alert"></p>
</form>`;
