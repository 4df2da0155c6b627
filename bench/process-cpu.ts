import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';

/**
 * CPU of local processes from /proc, for the drain's scaling report: the worker processes,
 * PgBouncer, and the whole PostgreSQL server (every backend and background process, including
 * the orchestrator's own progress polls). Readings are cumulative µs; a drain subtracts the
 * reading at "go" from the one at "done". Clock ticks are 10 ms per process and reading.
 */
let ticksPerSecond: number | undefined;
const toUs = (ticks: number) => {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return (ticks * 1e6) / ticksPerSecond;
};

/** The fields after "(comm) " of /proc/<pid>/stat (field 3 first), or null. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime + stime of a process in µs (null once it is gone); with `reaped`, its reaped children's too. */
export function processCpuUs(pid: number, reaped = false): number | null {
  const fields = statFields(pid);
  if (fields === null) return null;
  // utime, stime, cutime, cstime are fields 14–17.
  const own = Number(fields[11]) + Number(fields[12]);
  return toUs(reaped ? own + Number(fields[13]) + Number(fields[14]) : own);
}

/** Sum of `processCpuUs` over `pids`; NaN when one cannot be read. */
export function processesCpuUs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (processCpuUs(pid) ?? Number.NaN), 0);
}

/**
 * The PostgreSQL server's CPU: the postmaster with the children it reaped (backends that
 * exited) plus every live child. NaN when the server is not on this machine.
 */
export function serverCpuUs(postmaster: number | null): number {
  if (postmaster === null) return Number.NaN;
  let total = processCpuUs(postmaster, true) ?? Number.NaN;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    // ppid is field 4.
    if (fields !== null && Number(fields[1]) === postmaster) {
      total += toUs(Number(fields[11]) + Number(fields[12]));
    }
  }
  return total;
}

/** The postmaster's pid (a backend's parent), or null when the server is elsewhere. */
export async function postmasterPid(pool: pg.Pool): Promise<number | null> {
  const { rows } = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
  const pid = rows[0]?.pid ?? -1;
  const fields = statFields(pid);
  // A local process that happens to have a remote backend's pid is not postgres.
  if (fields === null || !readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(postgres')) {
    return null;
  }
  return Number(fields[1]);
}
