/**
 * The first step of `pnpm test`: every program the tests drive must be there. As root on a
 * machine with apt-get, what is missing is installed from Debian's packages (and said so);
 * anywhere else this exits at once with the one command to run, so no test runs without
 * what it needs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { installCommand, missingTestPrograms, type TestProgram } from './test-programs';

const aptGet = '/usr/bin/apt-get';
/** Another apt-get (a package manager's daily run, say) may hold the lock: wait for it. */
const waitForLock = ['-o', 'DPkg::Lock::Timeout=600'];

function run(command: string, args: readonly string[]): void {
  const result = spawnSync(command, args, {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.status !== 0) {
    throw new Error(`\`${command} ${args.join(' ')}\` failed (${result.status ?? result.signal})`);
  }
}

function describe(programs: readonly TestProgram[]): string {
  return programs.map((program) => `${program.debianPackage} (${program.path})`).join(', ');
}

function main(): number {
  const missing = missingTestPrograms();
  if (missing.length === 0) return 0;
  const asRoot = process.getuid?.() === 0;
  if (!asRoot || !existsSync(aptGet)) {
    console.error(
      `test prerequisites: missing ${describe(missing)}.\n` +
        `Install ${missing.length === 1 ? 'it' : 'them'}, then run \`pnpm test\` again:\n\n` +
        `  ${installCommand(missing)}\n`,
    );
    return 1;
  }
  const packages = missing.map((program) => program.debianPackage);
  console.info(`test prerequisites: installing ${packages.join(' ')} from Debian's packages`);
  run(aptGet, [...waitForLock, 'update', '-qq']);
  run(aptGet, [...waitForLock, 'install', '-y', '-qq', ...packages]);
  const still = missingTestPrograms();
  if (still.length > 0) {
    console.error(`test prerequisites: still missing after the install: ${describe(still)}`);
    return 1;
  }
  console.info(`test prerequisites: installed ${packages.join(' ')}`);
  return 0;
}

process.exitCode = main();
