// @ts-check
/**
 * Refreshing a page in place: the page is fetched again (the server renders and escapes it),
 * and each `[data-region]` is swapped for its fresh copy. The parts outside the regions (the
 * filters, the open dialog, the token) are never touched; inside them, open `<details>` stay
 * open, the focused control keeps the focus, and rows that were not there before are marked.
 * Requests coalesce: at most one is in flight, and changes arriving meanwhile cause one more.
 */

/** The attribute values that name a row or a control across two renders of a page. */
const keyAttributes = ['id', 'href', 'data-dialog', 'data-value-id', 'data-value-name'];
const rowAttributes = [
  'data-workflow-id',
  'data-transition-id',
  'data-task-id',
  'data-schedule',
  'data-queue',
];

/**
 * A selector for the same element in a fresh copy of the page.
 * @param {Element} element
 */
function selectorOf(element) {
  const parts = keyAttributes
    .filter((name) => element.hasAttribute(name))
    .map((name) => `[${name}="${CSS.escape(element.getAttribute(name) ?? '')}"]`);
  if (parts.length > 0) return element.tagName.toLowerCase() + parts.join('');
  if (element.tagName === 'SUMMARY' && element.parentElement?.id) {
    return `#${CSS.escape(element.parentElement.id)} > summary`;
  }
  return null;
}

/**
 * @param {Element} region
 * @returns {Set<string>}
 */
function rowKeys(region) {
  const keys = new Set();
  for (const name of rowAttributes) {
    for (const row of region.querySelectorAll(`[${name}]`))
      keys.add(`${name}=${row.getAttribute(name)}`);
  }
  return keys;
}

/**
 * @param {Element} current
 * @param {Element} fresh
 */
function swap(current, fresh) {
  for (const details of fresh.querySelectorAll('details[id]')) {
    const before = document.getElementById(details.id);
    if (before instanceof HTMLDetailsElement && details instanceof HTMLDetailsElement) {
      details.open = before.open;
    }
  }
  const known = rowKeys(current);
  for (const name of rowAttributes) {
    for (const row of fresh.querySelectorAll(`[${name}]`)) {
      if (!known.has(`${name}=${row.getAttribute(name)}`)) row.classList.add('fresh');
    }
  }
  const focused = document.activeElement;
  const selector = focused !== null && current.contains(focused) ? selectorOf(focused) : null;
  const adopted = document.adoptNode(fresh);
  current.replaceWith(adopted);
  if (selector !== null) {
    const again = adopted.querySelector(selector);
    if (again instanceof HTMLElement) again.focus({ preventScroll: true });
  }
}

/**
 * @param {{ token: () => string | null, readAfter: () => string | null, onError: (message: string) => void, onSwapped: () => void }} options
 */
export function createRefresher(options) {
  let running = false;
  let again = false;

  const refreshOnce = async () => {
    const token = options.token();
    /** @type {Record<string, string>} */
    const headers = { accept: 'text/html' };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const position = options.readAfter();
    if (position !== null) headers['causeway-read-after'] = position;
    const response = await fetch(window.location.href, { headers, cache: 'no-store' });
    const text = await response.text();
    const fresh = new DOMParser().parseFromString(text, 'text/html');
    for (const current of document.querySelectorAll('[data-region]')) {
      const name = current.getAttribute('data-region') ?? '';
      const replacement = fresh.querySelector(`[data-region="${CSS.escape(name)}"]`);
      if (replacement !== null) swap(current, replacement);
    }
    options.onSwapped();
  };

  const refresh = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await refreshOnce();
      } while (again);
    } catch (error) {
      options.onError(
        `Could not refresh the page: ${error instanceof Error ? error.message : String(error)}`,
      );
    } finally {
      running = false;
    }
  };
  return { refresh };
}
