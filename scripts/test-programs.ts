import { existsSync } from 'node:fs';

/** A program some tests drive, from Debian's packages, where those tests look for it. */
export interface TestProgram {
  /** The Debian package that installs it. */
  readonly debianPackage: string;
  /** The file the tests run or preload. */
  readonly path: string;
  /** Which tests need it. */
  readonly neededBy: string;
}

/** Debian's multiarch folder for this machine (libfaketime lives under it). */
function multiarchTriplet(): string {
  return process.arch === 'arm64' ? 'aarch64-linux-gnu' : 'x86_64-linux-gnu';
}

/** Debian's Chromium: the dashboard's end-to-end test drives it through playwright-core. */
export const chromiumPath = '/usr/bin/chromium';
/** Debian's PgBouncer: the scaling tests start it in front of the test server. */
export const pgbouncerPath = '/usr/sbin/pgbouncer';
/** Debian's libfaketime: preloaded, it moves a process's clock by `FAKETIME` (e.g. `+5h`). */
export const libfaketimePath = `/usr/lib/${multiarchTriplet()}/faketime/libfaketime.so.1`;

export const chromium: TestProgram = {
  debianPackage: 'chromium',
  path: chromiumPath,
  neededBy: 'The dashboard test in Chromium (test/dashboard/dashboard-browser.test.ts)',
};
export const pgbouncer: TestProgram = {
  debianPackage: 'pgbouncer',
  path: pgbouncerPath,
  neededBy: 'The PgBouncer test (test/scaling/pgbouncer.test.ts)',
};
export const libfaketime: TestProgram = {
  debianPackage: 'faketime',
  path: libfaketimePath,
  neededBy: 'The clock-skew tests (test/reliability/clock-skew.test.ts, long/)',
};

/** Everything `pnpm test` needs besides Node and pnpm (scripts/test-prerequisites.ts). */
export const testPrograms: readonly TestProgram[] = [chromium, pgbouncer, libfaketime];

/** The one command that installs `programs` (all of them when none are given). */
export function installCommand(programs: readonly TestProgram[] = testPrograms): string {
  return `sudo apt-get install ${programs.map((program) => program.debianPackage).join(' ')}`;
}

/** The programs whose file is not there. */
export function missingTestPrograms(): TestProgram[] {
  return testPrograms.filter((program) => !existsSync(program.path));
}

/**
 * Throws, naming the command that installs it, when `program` is missing: a test that needs
 * it fails at once with that message rather than later on an obscure assertion.
 */
export function requireTestProgram(program: TestProgram): void {
  if (existsSync(program.path)) return;
  throw new Error(
    `${program.neededBy} needs Debian's ${program.debianPackage} (${program.path}), which is ` +
      `missing. Install it with \`${installCommand([program])}\` (\`pnpm test\` installs it ` +
      'when run as root).',
  );
}
