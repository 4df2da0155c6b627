import { randomFillSync } from 'node:crypto';

const hex = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
/** Random bytes drawn in bulk (one system call per 409 ids). */
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomByte(): number {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool[offset++] as number;
}

/**
 * A new row id: a version 7 UUID (RFC 9562), milliseconds since the epoch followed by 74
 * random bits. Ids made close in time sort close together, so B-tree inserts of new
 * workflows, tasks and their log rows go to the right-hand pages instead of random ones.
 */
export function newId(now: number = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  const version = hex[0x70 | (randomByte() & 0x0f)] as string;
  const variant = hex[0x80 | (randomByte() & 0x3f)] as string;
  let rest = '';
  for (let i = 0; i < 7; i += 1) rest += hex[randomByte()] as string;
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-${version}${hex[randomByte()]}-${variant}${rest.slice(0, 2)}-${rest.slice(2, 14)}`;
}
