/**
 * The script and stylesheet, served from `assets/` as written: no build step, so a clean clone
 * (and the packed package, whose build copies the folder) serves exactly what is in the tree.
 * Only the files found at start are served; any other path under the prefix is a 404.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

export interface StaticAsset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

const assetsFolder = new URL('./assets/', import.meta.url);

const contentTypes: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The servable files by name (`dashboard.js`), read once. */
export function loadStaticAssets(): ReadonlyMap<string, StaticAsset> {
  const assets = new Map<string, StaticAsset>();
  for (const name of readdirSync(assetsFolder)) {
    const extension = name.slice(name.lastIndexOf('.'));
    const contentType = contentTypes[extension];
    if (contentType === undefined) continue;
    const body = readFileSync(new URL(name, assetsFolder));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(name, { body, contentType, etag });
  }
  return assets;
}
