/**
 * Type declarations for the packages' `dist/types/`: one TypeScript program over every
 * package's entry points (`src/index.ts`, and `src/internal.ts` where there is one),
 * declaration-only emit, then each `.d.ts` is written under its own
 * package. tsc keeps the source's extensionless relative specifiers (`./actors`), which a
 * consumer on `moduleResolution: node16/nodenext` cannot resolve in an ESM package, so a
 * declaration transformer rewrites them to the file Node's rules find (`./actors.js`,
 * `./db/index.js`); imports of other packages (`@causeway/workflow`) stay bare and resolve
 * through the installed package's `exports`.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** A package's entry points that `exports` maps (`src/<name>.ts`): `index`, and `internal` if any. */
export function libraryEntries(dir: string): string[] {
  return ['index', 'internal'].filter((entry) => existsSync(join(dir, 'src', `${entry}.ts`)));
}

export interface DeclarationTarget {
  /** The package's folder, e.g. `<repo>/packages/engine`. */
  readonly dir: string;
}

/** Emits `<package>/dist/types/**\/*.d.ts` for every target; throws on any diagnostic. */
export function emitDeclarations(repoRoot: string, targets: readonly DeclarationTarget[]): void {
  const configFile = join(repoRoot, 'tsconfig.json');
  const read = ts.readConfigFile(configFile, ts.sys.readFile);
  if (read.error !== undefined) throw new Error(formatDiagnostics([read.error]));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, repoRoot);
  const packagesRoot = join(repoRoot, 'packages');
  // A virtual outDir: writeFile below maps `<outDir>/<package>/src/x.d.ts` into the package.
  const outDir = join(repoRoot, '.declarations');
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
    rootDir: packagesRoot,
    outDir,
  };
  const program = ts.createProgram({
    rootNames: targets.flatMap((target) =>
      libraryEntries(target.dir).map((entry) => join(target.dir, 'src', `${entry}.ts`)),
    ),
    options,
  });
  const preEmit = ts.getPreEmitDiagnostics(program);
  if (preEmit.length > 0) throw new Error(formatDiagnostics(preEmit));

  const result = program.emit(
    undefined,
    (fileName, text) => {
      const [name, folder, ...rest] = relative(outDir, fileName).split(sep);
      const target = targets.find((candidate) => candidate.dir === join(packagesRoot, name ?? ''));
      if (target === undefined || folder !== 'src' || rest.length === 0) {
        throw new Error(`declaration outside a package's src/: ${fileName}`);
      }
      const destination = join(target.dir, 'dist', 'types', ...rest);
      mkdirSync(dirname(destination), { recursive: true });
      writeFileSync(destination, text);
    },
    undefined,
    true,
    { afterDeclarations: [nodeSpecifiers(packagesRoot)] },
  );
  if (result.diagnostics.length > 0) throw new Error(formatDiagnostics(result.diagnostics));
  for (const target of targets) {
    for (const entry of libraryEntries(target.dir)) {
      if (!existsSync(join(target.dir, 'dist', 'types', `${entry}.d.ts`))) {
        throw new Error(`no declarations were emitted for ${target.dir}/src/${entry}.ts`);
      }
    }
  }
}

/** Rewrites relative module specifiers in a declaration file to Node ESM's spelling. */
function nodeSpecifiers(packagesRoot: string): ts.TransformerFactory<ts.SourceFile | ts.Bundle> {
  return (context) => {
    const { factory } = context;
    return (root) => {
      if (!ts.isSourceFile(root)) throw new Error('declaration bundles are not supported');
      const from = root.fileName;
      const literal = (node: ts.Expression | undefined): ts.StringLiteral | undefined =>
        node !== undefined && ts.isStringLiteral(node) && node.text.startsWith('.')
          ? factory.createStringLiteral(nodeSpecifier(packagesRoot, from, node.text))
          : undefined;
      const rewrite = (node: ts.Node): ts.Node => {
        if (ts.isImportDeclaration(node)) {
          const specifier = literal(node.moduleSpecifier);
          if (specifier === undefined) return node;
          return factory.updateImportDeclaration(
            node,
            node.modifiers,
            node.importClause,
            specifier,
            node.attributes,
          );
        }
        if (ts.isExportDeclaration(node)) {
          const specifier = literal(node.moduleSpecifier);
          if (specifier === undefined) return node;
          return factory.updateExportDeclaration(
            node,
            node.modifiers,
            node.isTypeOnly,
            node.exportClause,
            specifier,
            node.attributes,
          );
        }
        if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
          const specifier = literal(node.argument.literal as ts.Expression);
          if (specifier === undefined) return node;
          return factory.updateImportTypeNode(
            node,
            factory.updateLiteralTypeNode(node.argument, specifier),
            node.attributes,
            node.qualifier,
            node.typeArguments,
            node.isTypeOf,
          );
        }
        if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
          if (node.name.text.startsWith('.')) {
            throw new Error(`${from}: relative module augmentation '${node.name.text}'`);
          }
        }
        return node;
      };
      const visit = (node: ts.Node): ts.Node => ts.visitEachChild(rewrite(node), visit, context);
      return ts.visitEachChild(root, visit, context);
    };
  };
}

/**
 * `./x` → `./x.js` when `x.ts` exists beside the importer, `./x/index.js` when `x/index.ts`
 * does. A specifier that leaves the importer's `src/` would point into another package's
 * sources, which a consumer does not have: that is a build error.
 */
function nodeSpecifier(packagesRoot: string, fromFile: string, specifier: string): string {
  const base = resolve(dirname(fromFile), specifier);
  const srcRoot = join(packagesRoot, relative(packagesRoot, fromFile).split(sep)[0] ?? '', 'src');
  if (!`${base}${sep}`.startsWith(`${srcRoot}${sep}`)) {
    throw new Error(`${fromFile}: '${specifier}' resolves outside ${srcRoot}`);
  }
  if (specifier.endsWith('.js') && existsSync(base.replace(/\.js$/, '.ts'))) return specifier;
  if (existsSync(`${base}.ts`)) return `${specifier}.js`;
  if (existsSync(join(base, 'index.ts'))) return `${specifier.replace(/\/$/, '')}/index.js`;
  throw new Error(`${fromFile}: cannot resolve '${specifier}' to a source file`);
}

function formatDiagnostics(diagnostics: readonly ts.Diagnostic[]): string {
  return ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (fileName) => fileName,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => '\n',
  });
}
