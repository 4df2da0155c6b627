/**
 * The API process of the database-fault scenarios: an engine without a worker and the API
 * server on a free loopback port, its pino log (info and up) on stdout.
 */
import { createApiServer } from '@causeway/api';
import { createEngine } from '@causeway/engine';
import { pino } from 'pino';
import { reportReady, untilStopped } from '../../api/fixtures/child-lifecycle';
import { faultChain } from './db-faults-workflows';

const databaseUrl = process.env.CAUSEWAY_CHILD_DATABASE_URL as string;
const logger = pino({ level: 'info' });
const engine = createEngine({ databaseUrl, workflows: [faultChain], logger, poolSize: 4 });
const server = createApiServer({
  engine,
  workflows: [faultChain],
  databaseUrl,
  logger,
  mode: 'production',
  operators: JSON.parse(process.env.CAUSEWAY_OPERATORS as string),
});
const { url } = await server.listen({ port: 0 });
untilStopped(async () => {
  await server.close();
  await engine.close();
});
reportReady({ holder: engine.holder, url });
