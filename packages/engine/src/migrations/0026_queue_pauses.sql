-- R53: a paused queue. One row per paused queue, with who paused it, why and when; a resume
-- deletes it. Claims read this table in their own statement (an uncorrelated condition, one
-- probe per statement), so it stays as small as the number of paused queues. Every pause and
-- resume is also kept in the history, oldest first by id.
create table causeway_queue_pauses (
  queue text primary key check (length(queue) between 1 and 200),
  operator text not null check (length(operator) between 1 and 200),
  reason text not null check (length(reason) between 1 and 1000),
  paused_at timestamptz not null
);

create table causeway_queue_pause_events (
  id bigint generated always as identity primary key,
  queue text not null,
  kind text not null check (kind in ('paused', 'resumed')),
  operator text not null,
  reason text,
  at timestamptz not null
);
create index causeway_queue_pause_events_queue on causeway_queue_pause_events (queue, id);
