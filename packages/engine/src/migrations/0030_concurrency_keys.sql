-- R50: concurrency keys. A task's group, key and limit are fixed at admission. Who holds a
-- slot is never stored: claims count the key's tasks in the holding states, so a slot cannot
-- leak. All three are set or none.
alter table causeway_tasks
  add column concurrency_group text,
  add column concurrency_key text,
  add column concurrency_limit integer,
  add constraint causeway_tasks_concurrency check (
    (concurrency_key is null and concurrency_group is null and concurrency_limit is null)
    or (concurrency_key is not null and concurrency_group is not null
      and concurrency_limit between 1 and 10000));

-- One row per key and queue that ever had a queued task of the key (a group may be shared by
-- steps on several queues). It holds no slot; it serialises the claims of its key and lets a
-- claim find due keys without walking their backlog:
-- - grant_version: bumped by every claim of the queue that grants the key a slot. A claim
--   counts the key's holders (on every queue) in its snapshot and grants only if the versions
--   of the key's rows on every queue, which it locks, are the ones it read, so two racing
--   claims, of one queue or two, can never both count the same free slot.
-- - head_at: the claim order (`causeway_claim_at`) of the key's earliest queued task, or
--   earlier (never later): claims walk keys by it, so a key with 10,000 due tasks is one row
--   to pass, and a full key never delays another.
-- - head_version: bumped whenever a task of the key becomes queued, so a claim that moves
--   head_at from its snapshot knows when a newer task may be earlier.
create table causeway_concurrency_keys (
  concurrency_group text not null,
  concurrency_key text not null,
  queue text not null,
  concurrency_limit integer not null,
  head_at timestamptz,
  head_version bigint not null default 0,
  grant_version bigint not null default 0,
  primary key (concurrency_group, concurrency_key, queue)
);
create index causeway_concurrency_keys_heads on causeway_concurrency_keys (queue, head_at)
  where head_at is not null;

-- Whatever makes a keyed task queued (a submit, a promotion, a retry, an expired lease, a
-- replay) moves its key's head here, so no path can forget it.
create function causeway_concurrency_head() returns trigger
  language plpgsql as $$
begin
  insert into causeway_concurrency_keys as k
    (concurrency_group, concurrency_key, queue, concurrency_limit, head_at)
  values (new.concurrency_group, new.concurrency_key, new.queue, new.concurrency_limit,
    causeway_claim_at(new.run_at, new.priority))
  on conflict (concurrency_group, concurrency_key, queue) do update
    set head_at = least(k.head_at, excluded.head_at), head_version = k.head_version + 1,
      concurrency_limit = excluded.concurrency_limit;
  return null;
end $$;

create trigger causeway_tasks_concurrency_head
  after insert or update of state, run_at, priority on causeway_tasks
  for each row when (new.state = 'queued' and new.concurrency_key is not null)
  execute function causeway_concurrency_head();

-- Keyed ready tasks leave the plain ready index for one of their own, by key, so a claim of
-- plain tasks never walks a full key's backlog, and a claim of a key reads only its head.
drop index causeway_tasks_ready;
create index causeway_tasks_ready on causeway_tasks
  (queue, causeway_claim_at(run_at, priority), run_at)
  where state = 'queued' and concurrency_key is null;
create index causeway_tasks_keyed_ready on causeway_tasks
  (queue, concurrency_group, concurrency_key, causeway_claim_at(run_at, priority), run_at)
  where state = 'queued' and concurrency_key is not null;

-- The holders of a key's slots, counted by every claim of the key.
create index causeway_tasks_slot_holders on causeway_tasks (concurrency_group, concurrency_key)
  where concurrency_key is not null
    and state in ('leased', 'cancel_requested', 'awaiting_receipt');
