import type { Blocker } from './blocker-codes';
import { type BlockerInput, blockerOf, type ConcurrencyFacts, isoOf } from './blocker-input';
import { moment } from './time-phrases';

/** Holders named in the sentence, at most this many (the facts list them all). */
const namedHolders = 3;

/**
 * A due `queued` task whose key's slots are all held (R50): no claim takes it until one of
 * the holders ends. A key with a free slot is not a blocker of its own: the task is as
 * claimable as any other.
 */
export function concurrencyBlocker(
  input: BlockerInput,
  facts: ConcurrencyFacts,
  dueSince: Date,
): Blocker {
  const { now } = input;
  const named = facts.holders
    .slice(0, namedHolders)
    .map(
      (holder) =>
        `${holder.step} of workflow ${holder.workflowId} (${holder.state}${holder.holder === null ? '' : ` by ${holder.holder}`}, since ${moment(holder.since, now)})`,
    );
  const more =
    facts.holders.length > namedHolders ? ` and ${facts.holders.length - namedHolders} more` : '';
  return blockerOf(
    input,
    'concurrency_limited',
    `due since ${moment(dueSince, now)}, but key ${JSON.stringify(facts.key)} of concurrency group ${JSON.stringify(facts.group)} holds its limit of ${facts.limit}: ${named.join(', ')}${more}; a claim takes it when one of them ends`,
    null,
    {
      group: facts.group,
      key: facts.key,
      limit: facts.limit,
      holders: facts.holders.map((holder) => ({ ...holder, since: isoOf(holder.since) })),
      runAt: isoOf(dueSince),
    },
  );
}
