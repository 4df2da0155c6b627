/**
 * Colour for a terminal, none elsewhere: only when stdout is a TTY, NO_COLOR is unset (any
 * value turns colour off, https://no-color.org) and TERM is not `dumb`. Every styled string
 * reads the same without its escapes, so pipes and tests see plain text.
 */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  /** Colours a state or code by how it reads: green done, red failed, yellow waiting… */
  state(text: string): string;
}

const codes = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 };

const stateColours: Readonly<Record<string, keyof typeof codes>> = {
  succeeded: 'green',
  dead: 'red',
  cancelled: 'magenta',
  cancel_requested: 'magenta',
  cancel_pending: 'magenta',
  waiting: 'yellow',
  waiting_for_event: 'yellow',
  awaiting_receipt: 'yellow',
  awaiting_children: 'yellow',
  children_pending: 'yellow',
  not_due: 'yellow',
  upstream_pending: 'dim',
  pending: 'dim',
  queued: 'cyan',
  claimable: 'cyan',
  leased: 'blue',
  running: 'blue',
  no_worker: 'red',
  queue_full: 'red',
  lease_stale: 'red',
};

export function colourEnabled(isTTY: boolean, env: NodeJS.ProcessEnv): boolean {
  return isTTY && env.NO_COLOR === undefined && env.TERM !== 'dumb';
}

export function createStyle(enabled: boolean): Style {
  const paint = (code: number, text: string) =>
    enabled && text !== '' ? `\u001b[${code}m${text}\u001b[0m` : text;
  return {
    enabled,
    bold: (text) => paint(codes.bold, text),
    dim: (text) => paint(codes.dim, text),
    state: (text) => {
      const colour = stateColours[text.toLowerCase()];
      return colour === undefined ? text : paint(codes[colour], text);
    },
  };
}

/** The width a terminal shows: escapes take none. */
export function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escapes is the point.
  return text.replace(/\u001b\[[0-9;]*m/g, '').length;
}
