import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { now } from './clock';
import type { CpuSample } from './schedule-protocol';

/**
 * The CPU of the PostgreSQL backends that serve some processes (those whose connections carry
 * an application_name starting with `prefix`), read from /proc/<pid>/stat when the server runs
 * on this machine. Each `sample()` lists the backends (pg_stat_activity) and reads their
 * utime + stime; the reading is the sum of every backend's last value, so a backend that exits
 * keeps what it was last seen to have used (it loses at most its last second) and a new one
 * counts from its start. The clock-tick resolution is 10 ms per backend and reading.
 */
export interface BackendCpu {
  sample(): Promise<void>;
  readonly readings: readonly CpuSample[];
  /** Backends seen at least once. */
  readonly backendsSeen: () => number;
  /** False when no backend's /proc entry could be read (a server on another machine). */
  readonly available: () => boolean;
}

export function backendCpu(pool: pg.Pool, prefix: string): BackendCpu {
  let ticksPerSecond = 100;
  try {
    ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    // keep Linux's usual 100
  }
  const last = new Map<number, number>();
  const readings: CpuSample[] = [];
  let unreadable = 0;
  return {
    readings,
    backendsSeen: () => last.size,
    available: () => last.size > 0 || unreadable === 0,
    async sample() {
      const { rows } = await pool.query<{ pid: number }>(
        `select pid from pg_stat_activity
          where datname = current_database() and application_name like $1`,
        [`${prefix}%`],
      );
      for (const { pid } of rows) {
        const us = backendCpuUs(pid, ticksPerSecond);
        if (us === null) unreadable += 1;
        else last.set(pid, us);
      }
      let sum = 0;
      for (const us of last.values()) sum += us;
      readings.push({ t: now(), us: sum });
    },
  };
}

/** utime + stime of a local postgres process in µs, or null (not here, not postgres). */
function backendCpuUs(pid: number, ticksPerSecond: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (!comm.startsWith('postgres')) return null;
    // Fields after "(comm) ": state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1e6) / ticksPerSecond : null;
  } catch {
    return null;
  }
}

/** A cumulative series' value at `t`, interpolated linearly between its readings. */
export function valueAt(series: readonly CpuSample[], t: number): number {
  const first = series[0];
  if (first === undefined) return Number.NaN;
  if (t <= first.t) return first.us;
  for (let i = 1; i < series.length; i++) {
    const b = series[i] as CpuSample;
    if (b.t >= t) {
      const a = series[i - 1] as CpuSample;
      return a.us + ((b.us - a.us) * (t - a.t)) / Math.max(1e-9, b.t - a.t);
    }
  }
  return (series.at(-1) as CpuSample).us;
}

/** CPU seconds a cumulative series spent in [from, to]; NaN if the readings do not cover it. */
export function cpuSecondsBetween(series: readonly CpuSample[], from: number, to: number): number {
  const first = series[0];
  const lastReading = series.at(-1);
  if (first === undefined || lastReading === undefined) return Number.NaN;
  if (first.t > from + 1_500 || lastReading.t < to - 1_500) return Number.NaN;
  return (valueAt(series, to) - valueAt(series, from)) / 1e6;
}
