// @ts-check
/**
 * The dashboard's script: follows the transitions the page is about (all workflows on the
 * list, one workflow on its page), swaps the changed regions, announces changes to screen
 * readers, keeps "… ago" texts current, signs in and runs the operator's actions. Every text
 * it writes itself goes through textContent; markup only ever comes from the server's escaped
 * render.
 */
import { readAfter, setUpActions } from './actions.js';
import { follow } from './live.js';
import { createRefresher } from './regions.js';
import { readToken, setUpSignIn } from './sign-in.js';

const body = document.body;
const endpoint = body.dataset.endpoint ?? '/graphql';
const liveState = /** @type {HTMLElement} */ (document.getElementById('live-state'));
/** The page's outcome line (looked up each time: a sign-in swaps the page's main part). */
const showOutcome = (/** @type {string} */ text) => {
  const outcome = document.getElementById('outcome');
  if (outcome !== null) outcome.textContent = text;
};
const announcements = /** @type {HTMLElement} */ (document.getElementById('announcements'));

/** @param {number} ms */
function spoken(ms) {
  const seconds = Math.round(Math.abs(ms) / 1_000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 24
    ? `${hours} h ${minutes % 60} min`
    : `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

function updateRelativeTimes() {
  const now = Date.now();
  for (const element of document.querySelectorAll('time[data-relative]')) {
    const at = Date.parse(element.getAttribute('datetime') ?? '');
    if (Number.isNaN(at)) continue;
    element.textContent = at > now ? `in ${spoken(at - now)}` : `${spoken(now - at)} ago`;
  }
}

/** Announcements are batched: a burst of edges is one sentence, not a flood. */
let pending = /** @type {string[]} */ ([]);
let flushTimer = /** @type {ReturnType<typeof setTimeout> | null} */ (null);
/** @param {string} text */
function announce(text) {
  pending.push(text);
  if (flushTimer !== null) return;
  flushTimer = setTimeout(() => {
    const line = document.createElement('p');
    line.textContent =
      pending.length <= 3
        ? pending.join('. ')
        : `${pending.slice(0, 2).join('. ')}; and ${pending.length - 2} more changes`;
    announcements.append(line);
    while (announcements.childElementCount > 5) announcements.firstElementChild?.remove();
    pending = [];
    flushTimer = null;
  }, 800);
}

const refresher = createRefresher({
  token: readToken,
  readAfter,
  onError: showOutcome,
  onSwapped: updateRelativeTimes,
});

/** @param {string | null} state */
const words = (state) => (state === null ? 'new' : state.toLowerCase().replaceAll('_', ' '));

/** The page shows a sign-in in place of its data: the server's reads need a token. */
const needsToken = () => document.querySelector('[data-needs-token]') !== null;

let stream = /** @type {{ restart(): void } | null} */ (null);
/** Follows the stream the page asks for (once: a page follows one stream for its lifetime). */
function startLive() {
  const mode = body.dataset.live ?? 'none';
  if (stream !== null || needsToken() || (mode !== 'workflows' && mode !== 'workflow')) return;
  stream = follow({
    endpoint,
    workflowId: mode === 'workflow' ? (body.dataset.liveWorkflow ?? null) : null,
    after: body.dataset.after ?? '0',
    token: readToken,
    onStatus: (text, failed) => {
      liveState.textContent = text;
      liveState.classList.toggle('failed', failed);
    },
    onTransition: (transition) => {
      const reason = transition.reason.toLowerCase();
      if (mode === 'workflows') {
        // The list shows workflows' states: their own edges are the ones that change it.
        if (transition.taskId !== null) return;
        announce(
          `Workflow ${transition.workflowId.slice(-8)} ${words(transition.from)} → ${words(transition.to)} (${reason})`,
        );
      } else {
        const what = transition.step ?? 'workflow';
        announce(
          `${what}: ${words(transition.from)} → ${words(transition.to)} (${reason}, ${transition.actor})`,
        );
      }
      void refresher.refresh();
    },
  });
}

/**
 * A page rendered without its data (the browser's own request carries no token) is fetched
 * again with the token, and its main part, title and stream position replace this one's.
 */
async function loadWithToken() {
  const token = readToken();
  if (token === null) return;
  showOutcome('Signing in…');
  try {
    const response = await fetch(window.location.href, {
      headers: { accept: 'text/html', authorization: `Bearer ${token}` },
      cache: 'no-store',
    });
    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
    const freshMain = fresh.getElementById('main');
    const main = document.getElementById('main');
    if (freshMain === null || main === null) throw new Error(`HTTP ${response.status}`);
    main.replaceWith(document.adoptNode(freshMain));
    document.title = fresh.title;
    for (const key of ['live', 'liveWorkflow', 'after']) {
      body.dataset[key] = fresh.body.dataset[key] ?? '';
    }
    updateRelativeTimes();
    // Still no data with the token: the API does not know it (any more).
    if (needsToken()) signIn.refuse();
    else startLive();
  } catch (error) {
    showOutcome(`Could not load the page: ${error instanceof Error ? error.message : error}`);
  }
}

setUpActions({
  endpoint,
  onDone: (text) => {
    showOutcome(text);
    void refresher.refresh();
  },
});
const signIn = setUpSignIn({
  endpoint,
  onSignedIn: () => {
    if (needsToken()) {
      void loadWithToken();
      return;
    }
    stream?.restart();
    void refresher.refresh();
  },
  // Whatever the token showed leaves the page with it.
  onSignedOut: () => window.location.reload(),
});

if (needsToken() && readToken() !== null) void loadWithToken();
else startLive();
updateRelativeTimes();
setInterval(updateRelativeTimes, 15_000);
