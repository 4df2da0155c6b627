-- The steps a workflow was submitted with, comma-separated (step names are lowercase letters,
-- digits, "_" and "-"). A workflow's tasks are all created at submit, so this never changes.
-- Claims read it to take a task only if the engine defines every step of its workflow: in a
-- rolling deploy, a worker of the older version must not complete a step that a step only the
-- newer version knows waits for, since it could not promote that step.
alter table causeway_workflows add column steps text;

-- Workflows submitted before this migration: their steps are their tasks' steps.
update causeway_workflows as w
   set steps = (select string_agg(t.step, ',' order by t.step)
                  from causeway_tasks as t where t.workflow_id = w.id);
