// @ts-check
/**
 * Signing in with a token. The token is kept in sessionStorage (this tab only: it survives a
 * reload, and is gone when the tab closes or the operator signs out) and goes out only as an
 * `Authorization: Bearer` header, never in a URL, where it would land in logs and history.
 * Two forms sign in: the header's, and the one a page shows in place of its data when the
 * server's reads need a token. Either keeps the token at once, then asks the API whether it
 * knows it (one `{ __typename }` read): a token it refuses is dropped again and the form says so.
 */

const tokenKey = 'causeway.operatorToken';
const verifyQuery = 'query DashboardSignIn { __typename }';

export function readToken() {
  const token = sessionStorage.getItem(tokenKey);
  return token === null || token === '' ? null : token;
}

/**
 * Whether the API accepts the token: `false` when it answers 401, `null` when it could not
 * be asked (the token is kept: the next read will say).
 * @param {string} endpoint
 * @param {string} token
 */
async function accepted(endpoint, token) {
  try {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ query: verifyQuery }),
      cache: 'no-store',
    });
    if (response.status === 401) return false;
    return response.ok ? true : null;
  } catch {
    return null;
  }
}

/**
 * Sets up both forms and the sign-out; returns what the page calls when the API refuses the
 * token it kept.
 * @param {{ endpoint: string, onSignedIn: () => void, onSignedOut: () => void }} options
 */
export function setUpSignIn(options) {
  const tokenInput = /** @type {HTMLInputElement} */ (document.getElementById('token-input'));
  const tokenState = /** @type {HTMLElement} */ (document.getElementById('token-state'));
  /** @param {string | null} problem */
  const showState = (problem) => {
    tokenState.classList.toggle('failed', problem !== null);
    tokenState.textContent =
      problem ??
      (readToken() === null
        ? 'Not signed in: actions are refused.'
        : 'Token set for this tab (until it closes or you sign out).');
  };
  showState(null);
  const invalid = 'That token is not valid: it was not kept. Check it and sign in again.';

  /**
   * @param {HTMLFormElement} form
   * @param {HTMLInputElement} input
   * @param {HTMLElement | null} error where the form shows a refusal (the header uses its state)
   */
  const signIn = async (form, input, error) => {
    const token = input.value.trim();
    if (token === '') return;
    input.value = '';
    if (error !== null) error.textContent = '';
    sessionStorage.setItem(tokenKey, token);
    showState(null);
    form.setAttribute('aria-busy', 'true');
    const verdict = await accepted(options.endpoint, token);
    form.removeAttribute('aria-busy');
    if (verdict === false) {
      if (readToken() === token) sessionStorage.removeItem(tokenKey);
      showState(invalid);
      if (error !== null) error.textContent = invalid;
      input.focus();
      return;
    }
    options.onSignedIn();
  };

  // Both forms are handled from the document: the page's own is swapped in and out with its data.
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    if (form.id === 'token-form') {
      event.preventDefault();
      void signIn(form, tokenInput, null);
    } else if (form.hasAttribute('data-sign-in')) {
      event.preventDefault();
      const input = form.elements.namedItem('token');
      if (!(input instanceof HTMLInputElement)) return;
      void signIn(form, input, form.querySelector('[data-sign-in-error]'));
    }
  });
  document.getElementById('token-forget')?.addEventListener('click', () => {
    sessionStorage.removeItem(tokenKey);
    showState(null);
    options.onSignedOut();
  });
  return {
    /** The API refused the kept token: it is dropped, and the forms say so. */
    refuse() {
      sessionStorage.removeItem(tokenKey);
      showState(invalid);
      for (const error of document.querySelectorAll('[data-sign-in-error]')) {
        error.textContent = invalid;
      }
    },
  };
}
