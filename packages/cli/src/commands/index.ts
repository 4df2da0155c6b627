import type { CommandSpec } from '../command';
import { blockerCommands } from './blockers';
import { eventCommands } from './events';
import { purgeCommands } from './purge';
import { queueCommands } from './queues';
import { scheduleCommands } from './schedules';
import { taskCommands } from './tasks';
import { treeCommands } from './tree';
import { versionCommands } from './versions';
import { watchCommands } from './watch';
import { workerCommands } from './workers';
import { workflowListCommands } from './workflow-list';
import { workflowCommands } from './workflows';

/** Every command, in the order `causeway --help` lists them. */
export const commands: readonly CommandSpec[] = [
  ...workflowListCommands,
  ...workflowCommands,
  ...blockerCommands,
  ...treeCommands,
  ...taskCommands,
  ...eventCommands,
  ...scheduleCommands,
  ...queueCommands,
  ...workerCommands,
  ...versionCommands,
  ...purgeCommands,
  ...watchCommands,
];
