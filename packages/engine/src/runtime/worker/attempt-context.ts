import { jsonStorageProblem, type StepContext } from '@causeway/workflow/internal';
import type { taskWriteFenced } from '../../db/lease/task-write-fenced';
import type { LeasedTask } from '../../db/rows';
import type { Logger } from '../../logger';

/** A fenced write of the attempt's own task row (progress, checkpoint, evidence, boundary). */
export type FencedChange = Parameters<typeof taskWriteFenced>[2];

/** What the step's `ctx` needs from its attempt. */
export interface AttemptOwner {
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Writes `change` fenced on the attempt's lease; throws `LeaseLost` or `CancelConfirmed`. */
  fencedWrite(change: FencedChange): Promise<void>;
}

/**
 * The `ctx` a step's run gets (docs/rules.md). Most handlers read a few fields and return, so what
 * costs to make is made on first use: the signal, the logger, the copy of the checkpoints and
 * each method, which is a bound function so that `const { checkpoint } = ctx` works. At high
 * attempt rates an eager object literal with its closures would be a large share of what the
 * worker allocates.
 */
export class AttemptContext implements StepContext<unknown> {
  readonly workflowId: string;
  readonly taskId: string;
  readonly step: string;
  readonly attempt: number;
  readonly idempotencyKey: string;
  private confirmed: Record<string, unknown> | null = null;
  private evidenceNow: string | null;
  private progressFn: StepContext['progress'] | null = null;
  private checkpointFn: StepContext['checkpoint'] | null = null;
  private boundaryFn: StepContext['boundary'] | null = null;
  private recordEvidenceFn: StepContext['recordEvidence'] | null = null;

  constructor(
    private readonly owner: AttemptOwner,
    private readonly task: LeasedTask,
    readonly input: unknown,
    readonly results: Readonly<Record<string, unknown>>,
  ) {
    this.workflowId = task.workflowId;
    this.taskId = task.id;
    this.step = task.step;
    this.attempt = task.attempt;
    this.idempotencyKey = `causeway:${task.id}`;
    this.evidenceNow = task.evidence;
  }

  get signal(): AbortSignal {
    return this.owner.signal;
  }

  get logger(): Logger {
    return this.owner.logger;
  }

  /** Checkpoints confirmed by earlier attempts, and by this one as it confirms them. */
  get checkpoints(): Readonly<Record<string, unknown>> {
    return this.confirmedCheckpoints();
  }

  /** The earlier attempts' checkpoints, copied once, with this attempt's as it confirms them. */
  private confirmedCheckpoints(): Record<string, unknown> {
    this.confirmed ??= { ...this.task.checkpoints };
    return this.confirmed;
  }

  get evidence(): string | null {
    return this.evidenceNow;
  }

  get progress(): StepContext['progress'] {
    this.progressFn ??= async (value) => {
      await this.owner.fencedWrite({ progressJson: JSON.stringify(value) });
    };
    return this.progressFn;
  }

  get checkpoint(): StepContext['checkpoint'] {
    this.checkpointFn ??= async (name, data) => {
      const value = data === undefined ? null : data;
      const problem = jsonStorageProblem(value);
      if (problem !== null)
        throw new TypeError(`checkpoint "${name}" cannot be stored: ${problem}`);
      await this.owner.fencedWrite({
        effectStarted: true,
        checkpoint: { name, dataJson: JSON.stringify(value) },
      });
      this.confirmedCheckpoints()[name] = value;
    };
    return this.checkpointFn;
  }

  get boundary(): StepContext['boundary'] {
    this.boundaryFn ??= async () => {
      await this.owner.fencedWrite({ effectStarted: true });
    };
    return this.boundaryFn;
  }

  get recordEvidence(): StepContext['recordEvidence'] {
    this.recordEvidenceFn ??= async (externalId) => {
      if (typeof externalId !== 'string' || externalId.length === 0 || externalId.length > 1_000) {
        throw new TypeError('recordEvidence needs an external id of 1 to 1,000 characters');
      }
      const problem = jsonStorageProblem(externalId);
      if (problem !== null) throw new TypeError(`the evidence cannot be stored: ${problem}`);
      await this.owner.fencedWrite({ effectStarted: true, evidence: externalId });
      this.evidenceNow = externalId;
    };
    return this.recordEvidenceFn;
  }
}
