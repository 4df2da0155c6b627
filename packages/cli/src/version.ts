import manifest from '../package.json' with { type: 'json' };

/** The package's version (bundled into dist by the build). */
export const version: string = manifest.version;
