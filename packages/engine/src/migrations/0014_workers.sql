-- The worker registry (issue 18): one row per engine that runs workers, keyed by its lease
-- holder (host/pid/boot id, R7), so a lease's holder can be looked up. Each row says what the
-- engine's workers serve (queues with their slots, the workflows and steps it defines, whether
-- it sweeps), and is heartbeated on its own timer; blockers read it to tell a live holder from
-- a gone one, and a due task nobody can claim from one waiting for a slot.
create table causeway_workers (
  holder text primary key,
  host text not null,
  pid integer not null,
  -- [{"name": "default", "slots": 4}, …]: the queues its workers claim from (R32).
  queues jsonb not null,
  -- [{"name": "publish-note", "steps": ["render", …]}, …]: a worker claims only tasks of
  -- workflows whose every step it defines.
  workflows jsonb not null,
  sweeper boolean not null,
  engine_version text not null,
  app_version text,
  -- Database time (R11), like every time the engine compares.
  started_at timestamptz not null,
  heartbeat_at timestamptz not null,
  -- The last heartbeat plus the writer's own age-out: past it, the worker counts as gone. The
  -- writer knows its heartbeat interval, so each row carries its own age-out and readers need
  -- no configuration that could disagree with it.
  stale_at timestamptz not null,
  check (stale_at > heartbeat_at)
);
-- Readers ask for the live rows (stale_at > now) and heartbeats prune long-stale ones; a
-- bounded table, but neither question should scan it.
create index causeway_workers_stale on causeway_workers (stale_at);
