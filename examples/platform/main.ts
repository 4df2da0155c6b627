/**
 * Runs the fake publishing platform by hand and logs every request:
 *
 *   PLATFORM_PORT=4100 PLATFORM_TOKEN=secret PLATFORM_MODE='503' pnpm --filter @causeway/example-platform start
 *
 * PLATFORM_PORT (default 4100), PLATFORM_HOST (default 127.0.0.1), PLATFORM_TOKEN (bearer
 * token required when set), PLATFORM_CALLBACK_URL (where receipts go), PLATFORM_MODE (mode
 * directives applied to every request, same grammar as the X-Platform-Mode header).
 */
import { type PlatformConfig, parseModeDirectives, startPlatform } from './server';

const env = process.env;
const mode = parseModeDirectives(env.PLATFORM_MODE ?? '');
const config: PlatformConfig = {
  ...(mode.fault === undefined ? {} : { fault: mode.fault }),
  ...(mode.ignoreIdempotencyKeys === undefined
    ? {}
    : { ignoreIdempotencyKeys: mode.ignoreIdempotencyKeys }),
  ...(mode.receipt === undefined ? {} : { receipt: mode.receipt }),
};

const platform = await startPlatform({
  host: env.PLATFORM_HOST || '127.0.0.1',
  port: Number(env.PLATFORM_PORT || 4100),
  token: env.PLATFORM_TOKEN || null,
  callback: env.PLATFORM_CALLBACK_URL || null,
  ...config,
  onRequest: (record) => {
    const key = record.idempotencyKey === null ? '' : ` key=${record.idempotencyKey}`;
    const took = record.answeredAt === null ? '' : ` ${record.answeredAt - record.receivedAt}ms`;
    const flags = `${record.fault !== null && record.fault !== 'ok' ? ` fault=${record.fault}` : ''}${record.replayed ? ' replayed' : ''}`;
    console.log(
      `${new Date(record.receivedAt).toISOString()} ${record.method} ${record.path} → ${record.status}${took}${key}${flags}`,
    );
  },
});
console.log(`platform listening on ${platform.url}`);

const stop = async (): Promise<void> => {
  const stats = platform.stats();
  await platform.close();
  console.log(
    `platform closed: ${stats.assetsUploaded} assets, ${stats.postsPublished} posts, ${stats.receiptsDelivered} receipts delivered`,
  );
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
