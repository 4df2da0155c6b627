import { type ExitKind, usageError } from './exit-codes';
import type { Endpoint } from './graphql-client';
import type { Output } from './output';

/** One option of a command (node:util parseArgs underneath). */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly description: string;
  /** The value's placeholder in help, e.g. `<json>`. */
  readonly value?: string;
  readonly required?: boolean;
  /** May be given more than once (`--attr a=1 --attr b=2`); read with `options(name)`. */
  readonly multiple?: boolean;
}

/** A positional argument. */
export interface ArgumentSpec {
  readonly name: string;
  readonly required: boolean;
}

export interface CommandSpec {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  readonly args: readonly ArgumentSpec[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Resolves to the exit kind when it is not `ok` (a refusal answered as data). */
  run(invocation: Invocation): Promise<ExitKind | undefined>;
}

/** What a command runs with: its parsed arguments, the API and where output goes. */
export class Invocation {
  constructor(
    readonly command: CommandSpec,
    private readonly positionals: readonly string[],
    private readonly values: Readonly<
      Record<string, string | boolean | (string | boolean)[] | undefined>
    >,
    readonly endpoint: Endpoint,
    readonly output: Output,
    /** Aborts on SIGINT/SIGTERM (watch ends cleanly). */
    readonly signal: AbortSignal,
    readonly now: () => Date = () => new Date(),
  ) {}

  /** A positional argument by its name in the spec. */
  arg(name: string): string | undefined {
    const index = this.command.args.findIndex((arg) => arg.name === name);
    return index === -1 ? undefined : this.positionals[index];
  }

  /** A positional the spec marks required (checked before run, so present here). */
  requiredArg(name: string): string {
    const value = this.arg(name);
    if (value === undefined) throw usageError(`${this.command.name} needs <${name}>`);
    return value;
  }

  option(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' ? value : undefined;
  }

  /** Every value of an option given more than once (`multiple`), in command-line order. */
  options(name: string): string[] {
    const value = this.values[name];
    const values = Array.isArray(value) ? value : [value];
    return values.filter((each): each is string => typeof each === 'string');
  }

  requiredOption(name: string): string {
    const value = this.option(name);
    if (value === undefined || value.trim() === '') {
      throw usageError(
        `${this.command.name} needs --${name} <${this.command.options[name]?.value ?? 'value'}>`,
      );
    }
    return value;
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }
}

/** Options shared by the operator mutations that take a reason. */
export const reasonOption: Readonly<Record<string, OptionSpec>> = {
  reason: {
    type: 'string',
    value: 'text',
    required: true,
    description: 'why, in your words: kept on the transitions, the event or the schedule history',
  },
};
