import { parseArgs } from 'node:util';
import { type CommandSpec, Invocation } from './command';
import { commands } from './commands/index';
import { CliError, type ExitKind, exitCodes, usageError } from './exit-codes';
import { defaultTimeoutMs, defaultUrl, globalOptions, takesValue } from './global-options';
import { commandHelp, generalHelp } from './help';
import { createOutput, type Streams } from './output';
import { colourEnabled, createStyle } from './style';
import { version } from './version';

export interface CliEnvironment extends Streams {
  readonly env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal (colour only there). */
  readonly isTTY: boolean;
  /** Aborted on SIGINT/SIGTERM: a running watch ends with exit 0. */
  readonly signal: AbortSignal;
}

/** Runs one command line (without `node causeway`) and resolves to the exit code. */
export async function runCli(
  argv: readonly string[],
  environment: CliEnvironment,
): Promise<number> {
  const json = argv.includes('--json');
  const output = createOutput(
    environment,
    json,
    createStyle(colourEnabled(environment.isTTY, environment.env)),
  );
  let command: CommandSpec | undefined;
  try {
    const at = commandIndex(argv);
    const name = at === -1 ? undefined : argv[at];
    const rest = at === -1 ? [...argv] : [...argv.slice(0, at), ...argv.slice(at + 1)];
    if (name === undefined || name === 'help') {
      return helpOnly(rest, environment, name === 'help');
    }
    command = commands.find((candidate) => candidate.name === name);
    if (command === undefined) throw usageError(`unknown command ${JSON.stringify(name)}`);
    const { values, positionals } = parse(command, rest);
    if (values.help === true) {
      environment.stdout.write(`${commandHelp(command)}\n`);
      return exitCodes.ok;
    }
    checkArguments(command, positionals, values);
    const invocation = new Invocation(
      command,
      positionals,
      values,
      {
        url: stringValue(values.url) ?? nonEmpty(environment.env.CAUSEWAY_URL) ?? defaultUrl,
        token: stringValue(values.token) ?? nonEmpty(environment.env.CAUSEWAY_TOKEN),
        timeoutMs: timeout(stringValue(values['timeout-ms'])),
      },
      output,
      environment.signal,
    );
    const kind: ExitKind = (await command.run(invocation)) ?? 'ok';
    return exitCodes[kind];
  } catch (error) {
    const failure =
      error instanceof CliError
        ? error
        : new CliError(
            'server',
            'INTERNAL_ERROR',
            `unexpected: ${(error as Error)?.stack ?? String(error)}`,
          );
    const hint =
      failure.kind === 'usage' && failure.code === 'USAGE'
        ? `see: causeway ${command === undefined ? '--help' : `${command.name} --help`}`
        : undefined;
    output.error(failure, hint);
    return exitCodes[failure.kind];
  }
}

/** Where the command's name is: the first word that is neither an option nor its value. */
function commandIndex(argv: readonly string[]): number {
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] as string;
    if (token === '--') return index + 1 < argv.length ? index + 1 : -1;
    if (!token.startsWith('-')) return index;
    if (takesValue(token)) index += 1;
  }
  return -1;
}

function helpOnly(rest: string[], environment: CliEnvironment, asked: boolean): number {
  if (rest.includes('--version')) {
    environment.stdout.write(`${version}\n`);
    return exitCodes.ok;
  }
  const topic = rest.find((token) => !token.startsWith('-'));
  const command = commands.find((candidate) => candidate.name === topic);
  if (topic !== undefined && command === undefined)
    throw usageError(`unknown command ${JSON.stringify(topic)}`);
  environment.stdout.write(
    `${command === undefined ? generalHelp(commands, version) : commandHelp(command)}\n`,
  );
  // `causeway` alone is a usage error (it did nothing); asking for help is not.
  return asked || rest.includes('--help') || rest.includes('-h') ? exitCodes.ok : exitCodes.usage;
}

function parse(command: CommandSpec, rest: string[]) {
  const options = Object.fromEntries(
    Object.entries({ ...globalOptions, ...command.options }).map(([name, spec]) => [
      name,
      {
        type: spec.type,
        ...('short' in spec && spec.short !== undefined ? { short: spec.short } : {}),
        ...(spec.multiple === true ? { multiple: true } : {}),
      },
    ]),
  );
  try {
    return parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError((error as Error).message.replace(/\. To specify a positional.*$/s, ''));
  }
}

function checkArguments(
  command: CommandSpec,
  positionals: readonly string[],
  values: Readonly<Record<string, unknown>>,
): void {
  const required = command.args.filter((arg) => arg.required);
  if (positionals.length < required.length) {
    const missing = required.slice(positionals.length).map((arg) => `<${arg.name}>`);
    throw usageError(`${command.name} needs ${missing.join(' ')}`);
  }
  if (positionals.length > command.args.length) {
    throw usageError(
      `${command.name} takes at most ${command.args.length} argument(s); got ${JSON.stringify(positionals)}`,
    );
  }
  for (const [name, spec] of Object.entries(command.options)) {
    const value = values[name];
    if (spec.required && (typeof value !== 'string' || value.trim() === '')) {
      throw usageError(`${command.name} needs --${name} <${spec.value ?? 'value'}>`);
    }
  }
}

function timeout(value: string | undefined): number {
  if (value === undefined) return defaultTimeoutMs;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms <= 0)
    throw usageError('--timeout-ms wants a positive whole number');
  return ms;
}

function stringValue(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
