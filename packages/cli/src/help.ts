import type { CommandSpec, OptionSpec } from './command';
import { globalOptions } from './global-options';

/** Help text: the command list, or one command's usage and options. */

function optionLines(options: Readonly<Record<string, OptionSpec>>): string[] {
  const entries = Object.entries(options).map(([name, spec]) => [
    `--${name}${spec.type === 'string' ? ` <${spec.value ?? 'value'}>` : ''}`,
    `${spec.description}${spec.required ? ' (required)' : ''}${spec.multiple ? ' (repeatable)' : ''}`,
  ]);
  const width = Math.max(0, ...entries.map(([flag]) => (flag as string).length));
  return entries.map(([flag, text]) => `  ${(flag as string).padEnd(width)}  ${text}`);
}

export function usageLine(command: CommandSpec): string {
  const args = command.args.map((arg) => (arg.required ? `<${arg.name}>` : `[<${arg.name}>]`));
  const required = Object.entries(command.options)
    .filter(([, spec]) => spec.required)
    .map(([name, spec]) => `--${name} <${spec.value ?? 'value'}>`);
  return ['causeway', command.name, ...args, ...required, '[options]'].join(' ');
}

export function commandHelp(command: CommandSpec): string {
  const own =
    Object.keys(command.options).length === 0
      ? []
      : ['', 'options:', ...optionLines(command.options)];
  return [
    `usage: ${usageLine(command)}`,
    '',
    command.summary,
    ...own,
    '',
    'global options:',
    ...optionLines(globalOptions),
  ].join('\n');
}

export function generalHelp(commands: readonly CommandSpec[], version: string): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    `causeway ${version}: operate Causeway workflows over its GraphQL API`,
    '',
    'usage: causeway <command> [arguments] [options]',
    '',
    'commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'global options:',
    ...optionLines({
      ...globalOptions,
      version: { type: 'boolean', description: 'print the version' },
    }),
    '',
    "causeway help <command> (or causeway <command> --help) shows a command's options.",
    'Exit codes: 0 ok, 1 server error, 2 usage, 3 not found, 4 refused, 5 unauthenticated,',
    '6 connection error (docs/cli.md).',
  ].join('\n');
}
