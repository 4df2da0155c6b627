-- R14: a cancel that comes after the submission was accepted changes no state (there is no
-- such edge), but it is recorded: who asked and when, so the explanation can say it came
-- too late.
alter table causeway_tasks
  add column cancel_asked_at timestamptz,
  add column cancel_asked_by text;
