-- R22: the transactional outbox. A step's send request is written in the same transaction
-- as its `leased → awaiting_receipt` edge; a dispatcher delivers it after commit with the
-- outbox id as idempotency key, and records every delivery attempt.
create table causeway_outbox (
  id uuid primary key,
  task_id uuid not null references causeway_tasks (id),
  workflow_id uuid not null references causeway_workflows (id),
  channel text not null,
  payload jsonb not null,
  state text not null check (state in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  -- Due time of the next delivery attempt; a dispatcher that takes the row pushes it out
  -- (a visibility timeout), so a dispatcher that dies mid-send is retried later.
  next_attempt_at timestamptz not null,
  delivered_at timestamptz,
  last_error_category text,
  last_error text,
  created_at timestamptz not null
);
create index causeway_outbox_due on causeway_outbox (next_attempt_at) where state = 'pending';
create index causeway_outbox_task on causeway_outbox (task_id);

create table causeway_outbox_deliveries (
  id bigint generated always as identity primary key,
  outbox_id uuid not null references causeway_outbox (id),
  attempt integer not null,
  at timestamptz not null,
  outcome text not null check (outcome in ('delivered', 'retry', 'failed')),
  status_code integer,
  error_category text,
  error text,
  holder text not null
);
create index causeway_outbox_deliveries_outbox on causeway_outbox_deliveries (outbox_id, id);
