/**
 * The operator's actions: a button names an action and its subject; the action's dialog asks
 * for a reason (and, to send an event, its name, key and payload), and the script sends the
 * mutation with the tab's operator token. The API decides: without a token it refuses with
 * UNAUTHENTICATED, which the dialog shows, and nothing changes.
 */
import { html, type SafeHtml } from './html';

interface ActionField {
  readonly name: string;
  readonly label: string;
  readonly kind: 'hidden' | 'text' | 'reason' | 'json';
  readonly required: boolean;
  readonly hint?: string;
}

interface ActionSpec {
  /** The GraphQL mutation the script sends (see dashboard.js). */
  readonly mutation: string;
  readonly title: string;
  readonly confirm: string;
  readonly fields: readonly ActionField[];
}

const reason: ActionField = {
  name: 'reason',
  label: 'Reason',
  kind: 'reason',
  required: true,
  hint: 'Kept with the operation, with your operator name.',
};
const hidden = (name: string): ActionField => ({
  name,
  label: name,
  kind: 'hidden',
  required: true,
});

/** An action on one subject (a workflow or task by `id`, a schedule or queue by `name`), with a reason. */
const withReason = (
  mutation: string,
  subject: 'id' | 'name',
  title: string,
  confirm: string,
): ActionSpec => ({ mutation, title, confirm, fields: [hidden(subject), reason] });

const actions = {
  'cancel-workflow': withReason('cancelWorkflow', 'id', 'Cancel workflow', 'Cancel workflow'),
  'cancel-task': withReason('cancelTask', 'id', 'Cancel step', 'Cancel step'),
  'replay-task': withReason('replayTask', 'id', 'Replay dead step', 'Replay'),
  'send-event': {
    mutation: 'sendEvent',
    title: 'Send event',
    confirm: 'Send event',
    fields: [
      { name: 'name', label: 'Event name', kind: 'text', required: true },
      { name: 'key', label: 'Key', kind: 'text', required: true },
      {
        name: 'payload',
        label: 'Payload (JSON)',
        kind: 'json',
        required: true,
        hint: 'What the waiting step receives; its schema may refuse it. The event is kept with your operator name as sender.',
      },
      reason,
    ],
  },
  'pause-schedule': withReason('pauseSchedule', 'name', 'Pause schedule', 'Pause'),
  'resume-schedule': withReason('resumeSchedule', 'name', 'Resume schedule', 'Resume'),
  'trigger-schedule': withReason('triggerSchedule', 'name', 'Trigger schedule now', 'Trigger'),
  'pause-queue': withReason('pauseQueue', 'name', 'Pause queue', 'Pause'),
  'resume-queue': withReason('resumeQueue', 'name', 'Resume queue', 'Resume'),
} satisfies Record<string, ActionSpec>;

export type ActionKind = keyof typeof actions;

/**
 * A button opening an action's dialog. `values` fill the dialog's fields (ids, the event's
 * name and key); `subject` says what it acts on, in the dialog's words.
 */
export function actionButton(
  kind: ActionKind,
  label: string,
  subject: string,
  values: Readonly<Record<string, string>>,
): SafeHtml {
  const data = Object.entries(values).map(([name, value]) => html` data-value-${name}="${value}"`);
  return html`<button type="button" class="action action-${kind}" data-dialog="${kind}" data-subject="${subject}"${data}>${label}</button>`;
}

function fieldHtml(kind: ActionKind, field: ActionField): SafeHtml {
  const id = `${kind}-${field.name}`;
  if (field.kind === 'hidden') return html`<input type="hidden" name="${field.name}">`;
  const hintId = `${id}-hint`;
  const describedBy = field.hint === undefined ? '' : html` aria-describedby="${hintId}"`;
  const required = field.required ? html` required` : '';
  const control =
    field.kind === 'text'
      ? html`<input id="${id}" name="${field.name}" type="text" spellcheck="false" maxlength="256"${required}${describedBy}>`
      : html`<textarea id="${id}" name="${field.name}" rows="${field.kind === 'json' ? 5 : 3}" maxlength="${field.kind === 'json' ? 262144 : 1000}"${field.kind === 'json' ? html` spellcheck="false"` : ''}${required}${describedBy}></textarea>`;
  return html`<p class="field"><label for="${id}">${field.label}</label>${control}${
    field.hint === undefined ? '' : html`<small id="${hintId}">${field.hint}</small>`
  }</p>`;
}

/** The dialogs for the given actions (each page renders those its buttons open). */
export function actionDialogs(kinds: readonly ActionKind[]): SafeHtml {
  return html`${kinds.map((kind) => {
    const spec: ActionSpec = actions[kind];
    return html`<dialog id="dialog-${kind}" class="action-dialog" aria-labelledby="dialog-${kind}-title">
<form method="dialog" data-mutation="${spec.mutation}">
  <h2 id="dialog-${kind}-title">${spec.title}</h2>
  <p class="subject" data-subject></p>
  <p class="token-needed" data-token-needed hidden>No operator token in this tab: the API will refuse. Paste one under “Operator token” first.</p>
  ${spec.fields.map((field) => fieldHtml(kind, field))}
  <p class="error" role="alert" data-error></p>
  <p class="buttons"><button type="submit" class="confirm">${spec.confirm}</button> <button type="button" data-close>Close</button></p>
</form>
</dialog>`;
  })}`;
}
