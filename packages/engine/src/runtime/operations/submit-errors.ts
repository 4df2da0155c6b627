import { type AdmissionError, submitRunAtProblem } from '@causeway/workflow/internal';
import { EngineError } from '../../errors';

/** The error of a submit whose `runAt` the insert refused against database time (R11, R36). */
export function runAtRefused(runAtMs: number, nowMs: number): EngineError {
  const problem = submitRunAtProblem(runAtMs, nowMs);
  if (problem === null) {
    throw new Error(`the insert refused runAt ${runAtMs} at ${nowMs}, which its check admits`);
  }
  return new EngineError('invalid_delay', problem, {
    runAt: new Date(runAtMs).toISOString(),
    databaseTime: new Date(nowMs).toISOString(),
  });
}

/** The error of a submit aborted before it committed (R6). */
export function abortedError(): EngineError {
  return new EngineError(
    'aborted',
    'the submit was aborted before it committed; nothing was accepted',
  );
}

/** The error of a request refused at admission (R34); `index`: its place in a batch, or null. */
export function admissionRefused(error: AdmissionError, index: number | null): EngineError {
  const where = index === null ? '' : ` (request ${index})`;
  return new EngineError(error.code, `${error.message}${where}`, {
    ...(error.path === undefined ? {} : { path: error.path }),
    ...(index === null ? {} : { index }),
  });
}
