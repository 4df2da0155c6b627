// @ts-check
/**
 * The dashboard's script: follows the transitions the page is about (all workflows on the
 * list, one workflow on its page), swaps the changed regions, announces changes to screen
 * readers, keeps "… ago" texts current, and runs the operator's actions. Every text it writes
 * itself goes through textContent; markup only ever comes from the server's escaped render.
 */
import { readAfter, readToken, setUpActions } from './actions.js';
import { follow } from './live.js';
import { createRefresher } from './regions.js';

const body = document.body;
const mode = body.dataset.live ?? 'none';
const endpoint = body.dataset.endpoint ?? '/graphql';
const liveState = /** @type {HTMLElement} */ (document.getElementById('live-state'));
const outcome = /** @type {HTMLElement} */ (document.getElementById('outcome'));
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
  onError: (message) => {
    outcome.textContent = message;
  },
  onSwapped: updateRelativeTimes,
});

/** @param {string | null} state */
const words = (state) => (state === null ? 'new' : state.toLowerCase().replaceAll('_', ' '));

let stream = /** @type {{ restart(): void } | null} */ (null);
if (mode === 'workflows' || mode === 'workflow') {
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

setUpActions({
  endpoint,
  onDone: (text) => {
    outcome.textContent = text;
    void refresher.refresh();
  },
  onTokenChanged: () => {
    stream?.restart();
    void refresher.refresh();
  },
});

// A server with private reads rendered no data: with a token, fetch it now.
if (document.querySelector('[data-needs-token]') !== null && readToken() !== null) {
  void refresher.refresh();
}
updateRelativeTimes();
setInterval(updateRelativeTimes, 15_000);
