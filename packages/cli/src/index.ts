/** `@causeway/cli`: the `causeway` command, and its pieces for programs that embed it. */
export type { CommandSpec } from './command';
export type { BlockerView } from './commands/blockers';
export { commands } from './commands/index';
export type { VersionView } from './commands/versions';
export type { WorkerView } from './commands/workers';
export { CliError, type ExitKind, exitCodes } from './exit-codes';
export { defaultUrl } from './global-options';
export { type CliEnvironment, runCli } from './run';
export { version } from './version';
