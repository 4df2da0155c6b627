/**
 * Races of child workflows (R43–R47), each run CAUSEWAY_RACE_ROUNDS times (default 500) on
 * real PostgreSQL with two real engines and their workers: a child's end against a cancel of
 * its parent, a child's failure against a cancel, and a replay of the dead parent step against
 * a straggler that is still finishing (whichever comes first, a straggler the failure cancelled
 * starts again in its place). Both sides start in the same tick, or one a few
 * milliseconds later, so both orders happen; each race checks that exactly one outcome came
 * about, that the tree's log tells it by allowed edges only (R25), that the step's tally
 * equals its children's states, and that nothing is left unfinished. A child's end locks the
 * child, then its parent; a parent's cancel the parent, then its children: PostgreSQL breaks
 * the deadlocks this makes (40P01), which must only delay, never lose, either side.
 */
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { seededRandom } from '../reliability/support/fault-injector';
import {
  type ChildInput,
  type ChildPlan,
  gates,
  inLanes,
  RaceRig,
  together,
} from './children-races-support';
import { readTrees, reasonsOf, type Tree, treeProblems } from './children-races-trees';

const database = useTestDatabase();

const rounds = Number(process.env.CAUSEWAY_RACE_ROUNDS ?? 500);
const lanes = 6;
const seed = Number(process.env.CAUSEWAY_TEST_SEED ?? Date.now() % 1_000_000);
const started = 'submitted lease_acquired children_started';

/** One round as the test drove it: the tree, what the racing call answered or threw. */
interface Round {
  readonly round: number;
  readonly rootId: string;
  readonly answer?: unknown;
  readonly error?: unknown;
}

/** What one race saw: outcomes by name, problems, deadlocks, and how long it took. */
interface RaceReport {
  readonly outcomes: Record<string, number>;
  readonly problems: string[];
}

/**
 * Runs a race `rounds` times: `drive` plays one round and answers its tree's id and the racing
 * call's answer; `judge` names the outcome of a finished tree (or adds problems). Prints the
 * counts, and returns them for the race's own expectations.
 */
async function race(
  name: string,
  drive: (rig: RaceRig, round: number, random: () => number) => Promise<Round>,
  judge: (tree: Tree, round: Round, problems: string[]) => string,
): Promise<RaceReport> {
  const rig = await RaceRig.start(database().url);
  const random = seededRandom(seed + name.charCodeAt(0));
  const problems: string[] = [];
  const outcomes: Record<string, number> = {};
  try {
    const deadlocksBefore = await rig.deadlocks();
    const begun = performance.now();
    const played: Round[] = [];
    await inLanes(rounds, lanes, async (round) => {
      const done = await drive(rig, round, random);
      if (!(await rig.settled(done.rootId))) problems.push(`round ${round}: never finished`);
      played.push(done);
    });
    const seconds = (performance.now() - begun) / 1_000;
    const deadlocks = (await rig.deadlocks()) - deadlocksBefore;
    const trees = await readTrees(
      rig.pool,
      played.map((done) => done.rootId),
    );
    trees.forEach((tree, index) => {
      const done = played[index] as Round;
      const found = treeProblems(tree);
      if (done.error !== undefined) found.push(`the racing call threw ${String(done.error)}`);
      const outcome = judge(tree, done, found);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      for (const problem of found) problems.push(`round ${done.round} (${outcome}): ${problem}`);
    });
    console.info(
      `[children-races] ${name}, seed ${seed}: ${played.length} rounds in ${seconds.toFixed(1)} s, ` +
        `${deadlocks} deadlocks (40P01); outcomes ${JSON.stringify(outcomes)}`,
    );
    if (problems.length > 0) {
      console.error(`[children-races] ${name}: engine log\n${rig.engineLog.slice(-20).join('')}`);
    }
    expect(played).toHaveLength(rounds);
  } finally {
    await rig.close();
  }
  expect(problems.slice(0, 20), `seed ${seed}`).toEqual([]);
  expect(await logMismatches(database().url), 'R25').toEqual([]);
  return { outcomes, problems };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** Quick siblings that succeed before the race, so the raced child is the last one. */
function quickSiblings(token: string, count: number): ChildInput[] {
  return Array.from({ length: count }, (_, index) => ({
    token: `${token}-q${index}`,
    plan: 'quick' as const,
  }));
}

async function succeededSiblings(rig: RaceRig, rootId: string, count: number): Promise<void> {
  if (count === 0) return;
  await waitFor(async () => (await rig.step(rootId)).children_succeeded === count, {
    intervalMs: 5,
    description: 'the quick siblings succeeded',
  });
}

/** Runs the racing call, keeping its answer or what it threw. */
async function call(run: () => Promise<unknown>): Promise<{ answer?: unknown; error?: unknown }> {
  try {
    return { answer: await run() };
  } catch (error) {
    return { error };
  }
}

/** The outcome the step's log names among the allowed sequences; else a problem. */
function stepOutcome(
  tree: Tree,
  problems: string[],
  allowed: Readonly<Record<string, string>>,
): string | undefined {
  const log = reasonsOf(tree.root.tasks[0]);
  const outcome = allowed[log];
  if (outcome === undefined) problems.push(`the step's log: ${log}`);
  return outcome;
}

/**
 * Both orders happened: each line names outcomes of which one at least was seen. Rare ones
 * come a few times in a hundred rounds, so fewer rounds (a debugging run) skip the check.
 */
function expectSeen(report: RaceReport, lines: readonly (readonly string[])[]): void {
  if (rounds < 200) return;
  const missing = lines.filter((anyOf) => !anyOf.some((name) => (report.outcomes[name] ?? 0) > 0));
  expect(missing, 'outcomes no round reached').toEqual([]);
}

/** Skews of one side of a race: mostly the same tick, sometimes a few milliseconds. */
const skewsMs = [0, 0, 0, 1, 2, 4];

/** Opens a child's gate and cancels its parent at once (either a little later, or neither). */
async function openWhileCancelling(
  rig: RaceRig,
  round: number,
  random: () => number,
  rootId: string,
  token: string,
): Promise<Round> {
  const [, cancel] = await together(
    async () => gates.open(token),
    () => call(() => rig.engine(round + 1).cancelWorkflow(rootId, { reason: 'race' })),
    pick(random, skewsMs),
    random() < 0.5,
  );
  return { round, rootId, ...cancel };
}

describe('child workflows racing their parent', () => {
  it(`a: the parent is cancelled while its last child succeeds, ${rounds} times`, async () => {
    const report = await race(
      'a',
      async (rig, round, random) => {
        const token = `a${seed}-${round}`;
        const plan: ChildPlan = pick(random, ['effect-gate', 'gate-boundary']);
        const siblings = pick(random, [0, 1]);
        const rootId = await rig.submit(
          [...quickSiblings(token, siblings), { token, plan }],
          round,
        );
        await gates.hasStarted(token);
        await succeededSiblings(rig, rootId, siblings);
        return openWhileCancelling(rig, round, random, rootId, token);
      },
      (tree, done, problems) => {
        const raced = tree.children.at(-1)?.tasks[0];
        const outcome = stepOutcome(tree, problems, {
          [`${started} children_succeeded`]: 'child first: children_succeeded',
          [`${started} cancel_requested cancel_after_submit`]: 'cancel first: cancel_after_submit',
          [`${started} cancel_requested children_cancelled`]: 'cancel first: children_cancelled',
        });
        if (outcome === undefined) return 'not allowed';
        const cancelFirst = outcome.startsWith('cancel first');
        // The raced child's own log tells the same story as its parent step's.
        const childEnd: Record<string, string> = {
          'child first: children_succeeded': 'completed',
          'cancel first: cancel_after_submit': 'cancel_requested cancel_after_submit',
          'cancel first: children_cancelled': 'cancel_requested cancel_confirmed',
        };
        if (reasonsOf(raced) !== `submitted lease_acquired ${childEnd[outcome]}`) {
          problems.push(`the raced child's log: ${reasonsOf(raced)}`);
        }
        const changed = (done.answer as { changed?: boolean } | undefined)?.changed;
        if (changed !== cancelFirst) problems.push(`the cancel answered changed: ${changed}`);
        return outcome;
      },
    );
    expectSeen(report, [
      ['child first: children_succeeded'],
      ['cancel first: cancel_after_submit', 'cancel first: children_cancelled'],
    ]);
  }, 600_000);

  it(`b: a child fails while the parent is cancelled, ${rounds} times`, async () => {
    const report = await race(
      'b',
      async (rig, round, random) => {
        const token = `b${seed}-${round}`;
        const failing: ChildInput = {
          token: `${token}-f`,
          plan: pick(random, ['gate-fail', 'gate-fail-retryable']),
        };
        const holds = Array.from({ length: pick(random, [1, 2]) }, (_, index) => ({
          token: `${token}-h${index}`,
          plan: 'hold' as const,
        }));
        const siblings = pick(random, [0, 1]);
        const rootId = await rig.submit(
          [...quickSiblings(token, siblings), failing, ...holds],
          round,
        );
        await Promise.all([failing, ...holds].map((child) => gates.hasStarted(child.token)));
        await succeededSiblings(rig, rootId, siblings);
        return openWhileCancelling(rig, round, random, rootId, failing.token);
      },
      (tree, done, problems) => {
        const step = tree.root.tasks[0];
        const outcome = stepOutcome(tree, problems, {
          [`${started} children_failed`]: 'fail first: children_failed',
          [`${started} cancel_requested children_cancelled`]: 'cancel first: children_cancelled',
        });
        if (outcome === undefined) return 'not allowed';
        const cancelFirst = outcome.startsWith('cancel first');
        const failed = tree.children.find((child) => child.token.endsWith('-f'));
        const cancelledEnds = [
          'submitted lease_acquired cancel_requested non_retryable_error',
          'submitted lease_acquired cancel_requested cancel_confirmed',
        ];
        const failedEnds = cancelFirst
          ? cancelledEnds
          : [
              'submitted lease_acquired non_retryable_error',
              'submitted lease_acquired attempts_exhausted',
            ];
        // A held sibling may fail first on a loaded machine (its attempt gives out): then it is
        // the child that decided the step, and the one meant to fail was cancelled instead (its
        // gate may still open after the cancel was asked, so it may end failing).
        const holds = tree.children.filter((child) => child.token.includes('-h'));
        const decidedByHold =
          !cancelFirst &&
          holds.some((hold) => failedEnds.includes(reasonsOf(hold.tasks[0]))) &&
          cancelledEnds.includes(reasonsOf(failed?.tasks[0]));
        if (!decidedByHold && !failedEnds.includes(reasonsOf(failed?.tasks[0]))) {
          problems.push(`the failing child's log: ${reasonsOf(failed?.tasks[0])}`);
        }
        for (const hold of holds) {
          const task = hold.tasks[0];
          const asked = task?.edges.find((edge) => edge.reason === 'cancel_requested');
          if (decidedByHold && failedEnds.includes(reasonsOf(task))) continue;
          if (reasonsOf(task) !== 'submitted lease_acquired cancel_requested cancel_confirmed') {
            problems.push(`a sibling's log: ${reasonsOf(task)}`);
          } else if (asked?.actor !== `parent:${step?.id}`) {
            problems.push(`a sibling was asked to cancel by ${asked?.actor}`);
          }
        }
        const changed = (done.answer as { changed?: boolean } | undefined)?.changed;
        if (changed !== cancelFirst) problems.push(`the cancel answered changed: ${changed}`);
        return outcome;
      },
    );
    expectSeen(report, [['fail first: children_failed'], ['cancel first: children_cancelled']]);
  }, 600_000);

  it(`c: a replay of the dead step while a straggler settles, ${rounds} times`, async () => {
    const report = await race(
      'c',
      async (rig, round, random) => {
        const token = `c${seed}-${round}`;
        const failing: ChildInput = { token: `${token}-f`, plan: 'fail-once-gate' };
        const straggler: ChildInput = {
          token: `${token}-s`,
          plan: pick(random, ['effect-gate', 'effect-gate-boundary']),
        };
        const siblings = pick(random, [0, 1]);
        const rootId = await rig.submit(
          [...quickSiblings(token, siblings), failing, straggler],
          round,
        );
        await Promise.all([failing, straggler].map((child) => gates.hasStarted(child.token)));
        await succeededSiblings(rig, rootId, siblings);
        gates.open(failing.token);
        // The failure ends the step and asks the straggler, which started its effect, to stop.
        const step = await waitFor(
          async () => {
            const found = await rig.step(rootId);
            return found.state === 'dead' ? found : undefined;
          },
          { intervalMs: 5, description: 'the step dead' },
        );
        const [, replay] = await together(
          async () => gates.open(straggler.token),
          () =>
            call(() =>
              rig.engine(round + 1).replayTask(step.id, { operator: 'carol', reason: 'race c' }),
            ),
          pick(random, skewsMs),
          random() < 0.5,
        );
        return { round, rootId, ...replay };
      },
      (tree, done, problems) => {
        const step = tree.root.tasks[0];
        const replayed = `${started} children_failed manual_replay`;
        const ending = stepOutcome(tree, problems, {
          [`${replayed} children_succeeded`]: 'succeeded',
        });
        if (ending === undefined) return 'not allowed';
        const stragglers = tree.children.filter((child) => child.token.endsWith('-s'));
        const [first, second] = stragglers;
        const settledBy = first?.tasks[0]?.edges.find((edge) => edge.from === 'cancel_requested');
        const straggled = first?.state === 'succeeded' ? 'succeeded' : 'cancelled';
        const replayEdge = step?.edges.find((edge) => edge.reason === 'manual_replay');
        let order: string;
        if (straggled === 'cancelled') {
          // The failure cancelled it: it starts again in its place (R47), in the replay's
          // transaction if it was cancelled by then, else in that of its own cancelled end.
          const restart = second?.tasks[0]?.edges[0];
          order =
            restart?.xid === replayEdge?.xid
              ? 'straggler first'
              : restart?.xid === settledBy?.xid
                ? 'replay first'
                : 'restarted elsewhere';
          if (
            stragglers.length !== 2 ||
            first?.replaced !== true ||
            second?.replaced !== false ||
            second.index !== first.index
          ) {
            problems.push(`straggler cancelled: ${stragglers.length} stragglers, not restarted`);
          } else if (
            restart?.reason !== 'submitted' ||
            restart.actor !== `parent:${step?.id}` ||
            restart.detail?.replaces !== first.id ||
            second.state !== 'succeeded'
          ) {
            problems.push(`the restarted straggler's log: ${JSON.stringify(restart)}`);
          }
          if (order === 'restarted elsewhere') {
            problems.push('the straggler started again, but not with the replay or its own end');
          }
        } else {
          // Rows carry the order they were written in, not the order their transactions
          // committed in: only a straggler written after the replay surely came after it.
          order =
            (settledBy?.id ?? 0) > (replayEdge?.id ?? 0)
              ? 'replay first'
              : 'straggler written first';
          if (stragglers.length !== 1) {
            problems.push(`straggler succeeded: ${stragglers.length} stragglers`);
          }
        }
        if ((done.answer as { state?: string } | undefined)?.state !== 'awaiting_children') {
          problems.push(`the replay answered ${JSON.stringify(done.answer)}`);
        }
        return `${order}, straggler ${straggled}: step ${ending}`;
      },
    );
    // Both orders of the straggler's cancel against the replay, and a straggler's success
    // surely after the replay (one before it cannot be told apart from the log).
    expectSeen(report, [
      ['straggler first, straggler cancelled: step succeeded'],
      ['replay first, straggler cancelled: step succeeded'],
      ['replay first, straggler succeeded: step succeeded'],
    ]);
  }, 600_000);
});
