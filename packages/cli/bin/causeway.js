#!/usr/bin/env node
// The workspace's `causeway` (pnpm exec causeway): runs the TypeScript sources through tsx, as
// the rest of the workspace does. The packed package's bin is dist/bin.js instead (publishConfig).
import { register } from 'tsx/esm/api';

register();
await import('../src/bin.ts');
