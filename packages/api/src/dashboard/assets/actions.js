// @ts-check
/**
 * The actions. Each action's dialog sends one mutation with the token the tab signed in with
 * (sign-in.js); the API decides, and its error code is shown as it answered. Without a token
 * the request goes out all the same and the API refuses it (UNAUTHENTICATED): nothing changes
 * either way.
 */
import { readToken } from './sign-in.js';

/** The WAL position after this tab's last mutation: the page reads at least that new. */
const readAfterKey = 'causeway.readAfter';

export function readAfter() {
  return sessionStorage.getItem(readAfterKey);
}

/** The mutations, by the name a dialog's form carries (data-mutation). */
const mutations = {
  cancelWorkflow: `mutation DashboardCancelWorkflow($id: ID!, $reason: String, $clientMutationId: String) {
    cancelWorkflow(id: $id, reason: $reason, clientMutationId: $clientMutationId) { workflowId state changed }
  }`,
  cancelTask: `mutation DashboardCancelTask($id: ID!, $reason: String, $clientMutationId: String) {
    cancelTask(id: $id, reason: $reason, clientMutationId: $clientMutationId) { result { taskId state changed reason refusal message } }
  }`,
  replayTask: `mutation DashboardReplayTask($id: ID!, $reason: String!, $clientMutationId: String) {
    replayTask(id: $id, reason: $reason, clientMutationId: $clientMutationId) { result { taskId state changed reason refusal message } }
  }`,
  sendEvent: `mutation DashboardSendEvent($name: String!, $key: String!, $payload: JSON!, $reason: String, $clientMutationId: String) {
    sendEvent(name: $name, key: $key, payload: $payload, reason: $reason, clientMutationId: $clientMutationId) { eventId deduplicated tasks { id step state } }
  }`,
  pauseSchedule: `mutation DashboardPauseSchedule($name: String!, $reason: String!, $clientMutationId: String) {
    pauseSchedule(name: $name, reason: $reason, clientMutationId: $clientMutationId) { changed schedule { name } }
  }`,
  resumeSchedule: `mutation DashboardResumeSchedule($name: String!, $reason: String!, $clientMutationId: String) {
    resumeSchedule(name: $name, reason: $reason, clientMutationId: $clientMutationId) { changed schedule { name } }
  }`,
  triggerSchedule: `mutation DashboardTriggerSchedule($name: String!, $reason: String!, $clientMutationId: String) {
    triggerSchedule(name: $name, reason: $reason, clientMutationId: $clientMutationId) { workflow { id state } }
  }`,
  pauseQueue: `mutation DashboardPauseQueue($name: String!, $reason: String!, $clientMutationId: String) {
    pauseQueue(name: $name, reason: $reason, clientMutationId: $clientMutationId) { changed queue { name } }
  }`,
  resumeQueue: `mutation DashboardResumeQueue($name: String!, $reason: String, $clientMutationId: String) {
    resumeQueue(name: $name, reason: $reason, clientMutationId: $clientMutationId) { changed queue { name } }
  }`,
};

/** @typedef {keyof typeof mutations} MutationName */

/**
 * What the operator reads after a mutation succeeded.
 * @param {MutationName} name
 * @param {any} data
 */
function outcomeText(name, data) {
  const answer = data[name];
  const lower = (/** @type {string} */ value) => value.toLowerCase().replaceAll('_', ' ');
  switch (name) {
    case 'cancelWorkflow':
      return `Workflow ${lower(answer.state)}${answer.changed ? '' : ' (already: nothing changed)'}.`;
    case 'cancelTask':
    case 'replayTask': {
      const result = answer.result;
      const refusal =
        result.refusal === null
          ? ''
          : ` (${result.refusal}${result.message ? `: ${result.message}` : ''})`;
      return `Step ${lower(result.state)}${result.changed ? '' : ', nothing changed'}${refusal}.`;
    }
    case 'sendEvent': {
      /** @type {{ step: string, state: string }[]} */
      const tasks = answer.tasks;
      const done = tasks.map((task) => `${task.step} ${lower(task.state)}`).join(', ');
      const repeat = answer.deduplicated ? ' (a repeat: nothing new stored)' : '';
      return `Event ${answer.eventId} stored${repeat}; ${done === '' ? 'no step waited for it yet: kept for later' : `completed: ${done}`}.`;
    }
    case 'pauseSchedule':
    case 'resumeSchedule':
      return `Schedule ${answer.schedule.name} ${name === 'pauseSchedule' ? 'paused' : 'resumed'}${answer.changed ? '' : ' (already so: nothing changed)'}.`;
    case 'triggerSchedule':
      return `Triggered: workflow ${answer.workflow.id} submitted.`;
    case 'pauseQueue':
    case 'resumeQueue':
      return `Queue ${answer.queue.name} ${name === 'pauseQueue' ? 'paused' : 'resumed'}${answer.changed ? '' : ' (already so: nothing changed)'}.`;
  }
}

/**
 * @param {HTMLFormElement} form
 * @returns {Record<string, unknown>}
 */
function variablesOf(form) {
  /** @type {Record<string, unknown>} */
  const variables = {};
  for (const [name, value] of new FormData(form)) {
    if (typeof value !== 'string') continue;
    if (name === 'payload') {
      try {
        variables.payload = JSON.parse(value);
      } catch (error) {
        throw new Error(
          `BAD_USER_INPUT (checked in the page): the payload is not JSON: ${error instanceof Error ? error.message : error}`,
        );
      }
    } else variables[name] = value.trim();
  }
  return variables;
}

/**
 * @param {string} endpoint
 * @param {MutationName} name
 * @param {Record<string, unknown>} variables
 */
async function sendMutation(endpoint, name, variables) {
  const token = readToken();
  /** @type {Record<string, string>} */
  const headers = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json',
  };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const response = await fetch(endpoint, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: mutations[name], variables }),
  });
  const position = response.headers.get('causeway-read-after');
  if (position !== null) sessionStorage.setItem(readAfterKey, position);
  /** @type {{ data?: any, errors?: { message: string, extensions?: { code?: string } }[] }} */
  let body;
  try {
    body = await response.json();
  } catch {
    throw new Error(`HTTP ${response.status}: the API did not answer JSON`);
  }
  const [error] = body.errors ?? [];
  if (error !== undefined)
    throw new Error(`${error.extensions?.code ?? `HTTP ${response.status}`}: ${error.message}`);
  return outcomeText(name, body.data);
}

/**
 * @param {{ endpoint: string, onDone: (text: string) => void }} options
 */
export function setUpActions(options) {
  // Buttons live in regions that are swapped: one listener on the document serves them all.
  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const button = target?.closest('button[data-dialog]');
    if (button instanceof HTMLButtonElement) openDialog(button);
    const close = target?.closest('[data-close]');
    if (close !== null && close !== undefined) close.closest('dialog')?.close();
  });

  /** @param {HTMLButtonElement} button */
  const openDialog = (button) => {
    const dialog = document.getElementById(`dialog-${button.dataset.dialog}`);
    if (!(dialog instanceof HTMLDialogElement)) return;
    const form = /** @type {HTMLFormElement} */ (dialog.querySelector('form'));
    form.reset();
    for (const attribute of button.attributes) {
      if (!attribute.name.startsWith('data-value-')) continue;
      const field = form.elements.namedItem(attribute.name.slice('data-value-'.length));
      if (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)
        field.value = attribute.value;
    }
    const subject = dialog.querySelector('[data-subject]');
    if (subject !== null) subject.textContent = button.dataset.subject ?? '';
    const error = dialog.querySelector('[data-error]');
    if (error !== null) error.textContent = '';
    dialog.querySelector('[data-token-needed]')?.toggleAttribute('hidden', readToken() !== null);
    // One id per opening: a double submit is answered once by the API, not done twice.
    form.dataset.clientMutationId = crypto.randomUUID();
    dialog.showModal();
    // The first field still to fill takes the focus (the event's name and key come filled in).
    const fields = /** @type {(HTMLInputElement | HTMLTextAreaElement)[]} */ ([
      ...form.querySelectorAll('input:not([type=hidden]), textarea'),
    ]);
    (fields.find((field) => field.value === '') ?? fields[0])?.focus();
  };

  // Submits are handled from the document too: a sign-in swaps the page's dialogs in.
  document.addEventListener('submit', async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.matches('dialog form[data-mutation]')) return;
    event.preventDefault();
    const dialog = /** @type {HTMLDialogElement} */ (form.closest('dialog'));
    const error = /** @type {HTMLElement} */ (form.querySelector('[data-error]'));
    const submit = /** @type {HTMLButtonElement} */ (form.querySelector('button[type=submit]'));
    const name = /** @type {MutationName} */ (form.dataset.mutation);
    error.textContent = '';
    submit.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      const variables = { ...variablesOf(form), clientMutationId: form.dataset.clientMutationId };
      const text = await sendMutation(options.endpoint, name, variables);
      dialog.close();
      options.onDone(text);
    } catch (failure) {
      error.textContent = failure instanceof Error ? failure.message : String(failure);
    } finally {
      submit.disabled = false;
      form.removeAttribute('aria-busy');
    }
  });
}
