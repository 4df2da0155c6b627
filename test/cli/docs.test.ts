/**
 * docs/cli.md keeps up with the commands: a section per command naming each of its options,
 * and the exit-code table equal to the codes the CLI exits with.
 */
import { readFileSync } from 'node:fs';
import { commands, exitCodes } from '@causeway/cli';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

/** The text of the `### …` section whose heading names the command. */
function section(name: string): string | undefined {
  return doc
    .split(/^### /m)
    .slice(1)
    .find((part) => (part.split('\n')[0] ?? '').split(', ').includes(name));
}

describe('docs/cli.md', () => {
  it('has a section for every command, naming its arguments and options and its JSON', () => {
    expect(commands.length).toBe(19);
    for (const command of commands) {
      const text = section(command.name);
      expect(text, command.name).toBeDefined();
      for (const arg of command.args) expect(text, command.name).toContain(`<${arg.name}>`);
      for (const option of Object.keys(command.options)) {
        expect(text, `${command.name} --${option}`).toContain(`--${option}`);
      }
      expect(text, command.name).toContain('JSON');
    }
  });

  it('lists the exit codes the CLI exits with', () => {
    const rows = [...doc.matchAll(/^\| (\d+) \| `([a-z_]+)` \|/gm)].map((match) => [
      match[2],
      Number(match[1]),
    ]);
    expect(Object.fromEntries(rows)).toEqual({ ...exitCodes });
  });
});
