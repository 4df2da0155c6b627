-- R43–R48: child workflows and map steps. A task whose step started children is
-- `awaiting_children` (no lease); its tally of children by outcome is kept on its row so the
-- child edge that decides it reads one row, not every sibling (R45). A child workflow records
-- its parent workflow, parent task, index and root; the parent columns never change after
-- admission. The CHECKs mirror machine-table.ts. NOT VALID where a constraint only widens:
-- existing rows were checked by the narrower one.
alter table causeway_tasks drop constraint causeway_tasks_state_check;
alter table causeway_tasks add constraint causeway_tasks_state_check check (state in (
  'pending', 'queued', 'leased', 'awaiting_receipt', 'waiting', 'awaiting_children',
  'cancel_requested', 'succeeded', 'cancelled', 'dead')) not valid;
alter table causeway_transitions drop constraint causeway_transitions_reason_check;
alter table causeway_transitions add constraint causeway_transitions_reason_check check (reason in (
  'submitted', 'upstream_succeeded', 'cancelled_before_start', 'lease_acquired',
  'deadline_exceeded_before_start', 'completed', 'retry_scheduled', 'lease_expired',
  'worker_shutdown', 'non_retryable_error', 'attempts_exhausted',
  'lease_expired_effect_uncertain', 'deadline_exceeded', 'submitted_awaiting_receipt',
  'cancel_requested', 'cancel_confirmed', 'cancel_after_submit', 'receipt_confirmed',
  'receipt_rejected', 'receipt_timeout', 'manual_replay', 'bulk_requeue', 'snoozed',
  'event_awaited', 'event_received', 'event_timeout', 'cancelled_while_waiting',
  'step_input_failed', 'children_started', 'children_succeeded', 'children_failed',
  'children_cancelled')) not valid;

alter table causeway_workflows
  add column parent_workflow_id uuid,
  add column parent_task_id uuid,
  add column child_index integer,
  add column root_workflow_id uuid,
  add column depth smallint not null default 0,
  -- Started with { detached: true }: not awaited, and nothing its parent does touches it.
  add column detached boolean not null default false,
  -- A replay of its parent step started a new child in its place (R47): not counted any more.
  add column replaced boolean not null default false,
  add constraint causeway_workflows_parent_check check (
    (parent_task_id is null) = (parent_workflow_id is null)
    and (parent_task_id is null) = (child_index is null)
    and (parent_task_id is null) = (root_workflow_id is null)
    and (parent_task_id is null) = (depth = 0));

-- A step's children in input order; a parent's and a root's descendants (R48).
create index causeway_workflows_parent_task on causeway_workflows (parent_task_id, child_index)
  where parent_task_id is not null;
create index causeway_workflows_parent on causeway_workflows (parent_workflow_id, created_at, id)
  where parent_workflow_id is not null;
create index causeway_workflows_root on causeway_workflows (root_workflow_id, created_at, id)
  where root_workflow_id is not null;

alter table causeway_tasks
  -- The step's children and how they ended so far (set when it starts them, R43–R45).
  add column children_total integer,
  add column children_succeeded integer,
  add column children_failed integer,
  -- Failures its tolerance allows (0: fail fast), and what its output lists: each child's
  -- `result`, each child's `outcome` (with a tolerance), or the `single` child's result.
  add column children_allowed_failures integer,
  add column children_output text check (children_output in ('result', 'outcome', 'single')),
  add constraint causeway_tasks_children_check check (
    (children_total is null) = (children_succeeded is null)
    and (children_total is null) = (children_failed is null)
    and (children_total is null) = (children_allowed_failures is null)
    and (children_total is null) = (children_output is null)
    and (children_total is null or children_succeeded + children_failed <= children_total));
-- The sweeper's question: which step awaiting children passed its deadline.
create index causeway_tasks_children_deadline on causeway_tasks (deadline_at)
  where state = 'awaiting_children' and deadline_at is not null;
-- The live state's own index, as every live state has one (0015): the metrics count it by
-- queue, the live list finds it, and the sweeper's fallback reads it for a step whose tally
-- decided it while no engine that defines its workflow held it (R54).
create index causeway_tasks_awaiting_children on causeway_tasks (queue)
  where state = 'awaiting_children';
