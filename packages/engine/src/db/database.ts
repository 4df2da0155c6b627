import { type Kysely, sql, type Transaction } from 'kysely';
import { preparedMarker } from './prepared-statements';
import type { CausewayDatabase } from './schema';

/**
 * The engine's store: every SQL statement Causeway runs lives in this folder. Functions that
 * lock rows take a Transaction. Names are noun-first (River's driver interface).
 */
export type Db = Kysely<CausewayDatabase> | Transaction<CausewayDatabase>;

/** Marks a hot statement with a fixed text as a named prepared statement (see prepared-statements.ts). */
export const preparedSql = sql.raw(preparedMarker);
