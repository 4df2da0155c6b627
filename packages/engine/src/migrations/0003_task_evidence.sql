-- R21: the external acceptance id of a task's effect, recorded before anything else. With
-- it a re-run asks for the outcome instead of resubmitting.
alter table causeway_tasks add column evidence text;
