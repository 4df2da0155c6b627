/**
 * The API process of the database-fault scenarios: an engine without a worker and the API
 * server on a free loopback port, its pino log (info and up) on stdout.
 */
import { pino } from 'pino';
import { serveApiChild } from '../../api/fixtures/serve-api-child';
import { faultChain } from './db-faults-workflows';

await serveApiChild({ workflows: [faultChain], logger: pino({ level: 'info' }), poolSize: 4 });
