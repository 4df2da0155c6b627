/**
 * The step graph as SVG, laid out in layers: a step's column is one more than the deepest of
 * the steps it runs after, so every edge points right; within a column, steps sit near the
 * average row of their upstream steps (one barycentre pass), which keeps chains straight.
 * Drawn by hand: a workflow has a handful of steps, and a graph library would be most of the
 * page's weight.
 */
import { durationText, timeText } from './format';
import { html, type SafeHtml } from './html';

export interface GraphStep {
  readonly name: string;
  readonly after: readonly string[];
  /** The event an event step waits for. */
  readonly event: string | null;
  readonly delayMs: number | null;
}

export interface GraphTask {
  readonly id: string;
  readonly step: string;
  /** TaskState, as GraphQL spells it (UPPER_SNAKE). */
  readonly state: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly runAt: string | null;
}

export interface PlacedStep {
  readonly step: GraphStep;
  readonly layer: number;
  readonly row: number;
  readonly x: number;
  readonly y: number;
}

export interface GraphLayout {
  readonly nodes: readonly PlacedStep[];
  readonly edges: readonly { readonly from: PlacedStep; readonly to: PlacedStep }[];
  readonly width: number;
  readonly height: number;
}

export const nodeWidth = 200;
export const nodeHeight = 66;
const gapX = 56;
const gapY = 20;
const margin = 12;

/** Places the steps (given in a topological order, as `definitions` lists them). */
export function layoutSteps(steps: readonly GraphStep[]): GraphLayout {
  const layerOf = new Map<string, number>();
  for (const step of steps) {
    const upstream = step.after.map((name) => layerOf.get(name) ?? -1);
    layerOf.set(step.name, upstream.length === 0 ? 0 : Math.max(...upstream) + 1);
  }
  const layers: GraphStep[][] = [];
  for (const step of steps) {
    const layer = layerOf.get(step.name) ?? 0;
    const column = layers[layer] ?? [];
    column.push(step);
    layers[layer] = column;
  }
  const rowOf = new Map<string, number>();
  for (const column of layers) {
    const wanted = (step: GraphStep) => {
      const rows = step.after.map((name) => rowOf.get(name)).filter((row) => row !== undefined);
      return rows.length === 0
        ? Number.POSITIVE_INFINITY
        : rows.reduce((a, b) => a + b) / rows.length;
    };
    // A stable sort: steps without upstream rows keep the definition's order.
    column.sort((a, b) => {
      const [wa, wb] = [wanted(a), wanted(b)];
      return wa === wb ? 0 : wa < wb ? -1 : 1;
    });
    column.forEach((step, row) => {
      rowOf.set(step.name, row);
    });
  }
  const tallest = Math.max(1, ...layers.map((column) => column.length));
  const height = margin * 2 + tallest * nodeHeight + (tallest - 1) * gapY;
  const placed = new Map<string, PlacedStep>();
  layers.forEach((column, layer) => {
    const columnHeight = column.length * nodeHeight + (column.length - 1) * gapY;
    const top = (height - columnHeight) / 2;
    column.forEach((step, row) => {
      placed.set(step.name, {
        step,
        layer,
        row,
        x: margin + layer * (nodeWidth + gapX),
        y: top + row * (nodeHeight + gapY),
      });
    });
  });
  const nodes = steps.map((step) => placed.get(step.name) as PlacedStep);
  const edges = nodes.flatMap((to) =>
    to.step.after.flatMap((name) => {
      const from = placed.get(name);
      return from === undefined ? [] : [{ from, to }];
    }),
  );
  const width = margin * 2 + layers.length * nodeWidth + Math.max(0, layers.length - 1) * gapX;
  return { nodes, edges, width, height };
}

/** The third line of a node: what the step waits for, its delay, or when it is due. */
function markerOf(step: GraphStep, task: GraphTask | undefined, now: Date): string {
  if (task !== undefined && task.state === 'QUEUED' && task.runAt !== null) {
    const runAt = new Date(task.runAt);
    if (runAt.getTime() > now.getTime()) return `due ${timeText(task.runAt).slice(11, 19)}`;
  }
  if (step.event !== null) return `waits for ${step.event}`;
  if (step.delayMs !== null) return `delay ${durationText(step.delayMs)}`;
  if (task !== undefined && task.attempt > 0)
    return `attempt ${task.attempt} of ${task.maxAttempts}`;
  return '';
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The graph of one workflow: a node per step, coloured (and labelled) by its task's state. */
export function renderStepGraph(
  steps: readonly GraphStep[],
  tasks: readonly GraphTask[],
  now: Date,
): SafeHtml {
  const layout = layoutSteps(steps);
  const taskOf = new Map(tasks.map((task) => [task.step, task]));
  const edges = layout.edges.map(({ from, to }) => {
    const [x1, y1] = [from.x + nodeWidth, from.y + nodeHeight / 2];
    const [x2, y2] = [to.x - 6, to.y + nodeHeight / 2];
    const bend = (x2 - x1) / 2;
    return html`<path class="edge" data-from="${from.step.name}" data-to="${to.step.name}" d="M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}" marker-end="url(#arrow)"/>`;
  });
  const nodes = layout.nodes.map(({ step, x, y }) => {
    const task = taskOf.get(step.name);
    const state = task?.state.toLowerCase() ?? 'unknown';
    const marker = markerOf(step, task, now);
    const kinds = [step.event === null ? '' : ' waits', step.delayMs === null ? '' : ' delayed'];
    const label = `${step.name}: ${state.replaceAll('_', ' ')}${marker === '' ? '' : `, ${marker}`}`;
    const node = html`<g class="node state-${state}${kinds.join('')}" data-step="${step.name}" data-state="${state}">
  <title>${label}</title>
  <rect x="${x}" y="${y}" width="${nodeWidth}" height="${nodeHeight}" rx="8"/>
  <text class="name" x="${x + 12}" y="${y + 22}">${clip(step.name, 24)}</text>
  <text class="status" x="${x + 12}" y="${y + 40}">${state.replaceAll('_', ' ')}</text>
  ${marker === '' ? '' : html`<text class="marker" x="${x + 12}" y="${y + 57}">${clip(marker, 30)}</text>`}
</g>`;
    return task === undefined
      ? node
      : html`<a href="#task-${task.id}" aria-label="${label}">${node}</a>`;
  });
  return html`<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${layout.height}" viewBox="0 0 ${layout.width} ${layout.height}" role="group" aria-label="Step graph: ${layout.nodes.length} steps">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrow-head"/></marker></defs>
${edges}
${nodes}
</svg>`;
}
