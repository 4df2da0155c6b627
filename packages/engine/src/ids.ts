import { randomFillSync } from 'node:crypto';

/** Random bytes drawn in bulk and turned into hex once per refill (one system call per 431 ids). */
const pool = Buffer.alloc(4096);
let poolHex = '';
let offset = 0;
const hexPerId = 19;

function randomHex(): string {
  if (offset + hexPerId > poolHex.length) {
    randomFillSync(pool);
    poolHex = pool.toString('hex');
    offset = 0;
  }
  const hex = poolHex.slice(offset, offset + hexPerId);
  offset += hexPerId;
  return hex;
}

/** RFC 9562 variant bits (10xx) over the two random low bits of one hex digit. */
const variantDigit = Array.from({ length: 16 }, (_, nibble) => (0x8 | (nibble & 0x3)).toString(16));

let lastMs = -1;
let lastTimeHex = '';

/**
 * A new row id: a version 7 UUID (RFC 9562), milliseconds since the epoch followed by 74
 * random bits. Ids made close in time sort close together, so B-tree inserts of new
 * workflows, tasks and their log rows go to the right-hand pages instead of random ones.
 * (A submit makes thousands per batch, so the hex of the time is kept per millisecond.)
 */
export function newId(now: number = Date.now()): string {
  if (now !== lastMs) {
    lastMs = now;
    const time = now.toString(16).padStart(12, '0');
    lastTimeHex = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
  }
  const random = randomHex();
  return `${lastTimeHex}${random.slice(0, 3)}-${variantDigit[Number.parseInt(random[3] as string, 16)]}${random.slice(4, 7)}-${random.slice(7, 19)}`;
}
