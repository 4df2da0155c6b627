import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Marks a statement whose text never changes (values travel as array parameters) so it is
 * sent as a named prepared statement: each connection parses and plans it once instead of on
 * every execution, which for the engine's hot CTEs costs more than running them.
 */
export const preparedMarker = '/* causeway:prepared */';

/**
 * Makes every client of `pool` send marked statements as named prepared statements. The
 * name is a hash of the text, so a changed statement gets a new name; unmarked statements
 * (whose text varies, e.g. Kysely's `in (...)` lists) stay unnamed and are never cached.
 */
export function usePreparedStatements(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const names = new Map<string, string>();
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const [text, values] = args;
      if (typeof text === 'string' && Array.isArray(values) && text.includes(preparedMarker)) {
        let name = names.get(text);
        if (name === undefined) {
          name = `cw_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
          names.set(text, name);
        }
        return query({ name, text, values }, ...args.slice(2));
      }
      return query(...args);
    };
  });
}
