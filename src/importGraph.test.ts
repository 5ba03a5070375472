/**
 * The layering of src/ as a test: every relative import of every source file (static
 * imports and re-exports, `import('…')` calls and `typeof import('…')` types,
 * `new URL('…', import.meta.url)` worker and hook files) is read with the TypeScript parser,
 * each file is mapped to its top-level folder, and an import may only point to a folder of
 * the same or a lower layer:
 *
 *   core → model → envs → traces → recipes → run → experiments, storage, workers → ui, cli → app
 *
 * (`app` is src/'s own files: main.ts, App.svelte and the cross-folder tests; `workers` is
 * the top-level workers/ folder, which the page imports.) Folders of one layer may import
 * each other, but never both ways (no cycle between folders), and no file under src/ may
 * import scripts/ (scripts run src, not the other way round).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Layer of each top-level folder; an import may only go to the same or a lower layer. */
const LAYERS: Readonly<Record<string, number>> = {
  /** Static files the app serves as they are (no code): any layer may read them. */
  public: 0,
  /** Committed results and docs figures, which the page imports as data at build time (`?raw`, a .png). */
  results: 0,
  docs: 0,
  core: 0,
  model: 1,
  envs: 2,
  traces: 3,
  recipes: 4,
  /** Run assembly: assets, checkpoints, experiment files, the Node runner. */
  run: 5,
  experiments: 6,
  /** Exports of a run for other trainers (VeRL): reads run assembly, written by the CLI. */
  export: 6,
  storage: 6,
  workers: 6,
  ui: 7,
  cli: 7,
  app: 8,
};

/**
 * Imports that break the layering today, each with its reason, so that any new one fails.
 * `from` and `to` are repository-relative paths.
 */
const KNOWN_BACK_EDGES: readonly { from: string; to: string; reason: string }[] = [];

export interface ImportEdge {
  /** Repository-relative path of the importing file. */
  from: string;
  /** Repository-relative path of the imported file. */
  to: string;
  /** The specifier as written. */
  spec: string;
}

const SOURCE_EXTENSIONS = ['.ts', '.mts', '.svelte', '.mjs', '.js'];

function listSourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listSourceFiles(p));
    else if (SOURCE_EXTENSIONS.some((ext) => name.endsWith(ext))) out.push(p);
  }
  return out;
}

/** The script blocks of a .svelte file, or the whole text of a script. */
function readScript(file: string): string {
  const text = readFileSync(file, 'utf8');
  if (!file.endsWith('.svelte')) return text;
  return [...text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]).join('\n');
}

/**
 * Every module specifier a file names: imports, re-exports, import() and import types, and
 * new URL(…, import.meta.url) (`isUrl`: it may also name a folder or a data file).
 */
export function findSpecifiers(fileName: string, text: string): { spec: string; isUrl: boolean }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const specs: { spec: string; isUrl: boolean }[] = [];
  const add = (spec: string, isUrl = false) => specs.push({ spec, isUrl });
  const visit = (node: ts.Node) => {
    const isModuleStatement = ts.isImportDeclaration(node) || ts.isExportDeclaration(node);
    if (isModuleStatement && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) add(arg.text);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) add(arg.literal.text);
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL') {
      const [arg, base] = node.arguments ?? [];
      if (arg && ts.isStringLiteralLike(arg) && base?.getText(source) === 'import.meta.url') add(arg.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specs;
}

/** The file a relative specifier names (vite's `?url`-style suffixes dropped), or null. */
function resolveSpecifier(fromFile: string, spec: string): string | null {
  const base = path.resolve(path.dirname(fromFile), spec.replace(/\?.*$/, ''));
  const candidates = [base, `${base}.ts`, base.replace(/\.js$/, '.ts'), path.join(base, 'index.ts')];
  return candidates.find((f) => existsSync(f) && statSync(f).isFile()) ?? null;
}

/** The relative imports of every file under src/ and workers/; throws on one that names no file. */
export function collectImportEdges(): ImportEdge[] {
  const files = [...listSourceFiles(path.join(ROOT, 'src')), ...listSourceFiles(path.join(ROOT, 'workers'))];
  const edges: ImportEdge[] = [];
  for (const file of files) {
    for (const { spec, isUrl } of findSpecifiers(file, readScript(file))) {
      if (!spec.startsWith('.')) continue;
      const target = resolveSpecifier(file, spec);
      const from = path.relative(ROOT, file).split(path.sep).join('/');
      if (!target && isUrl) continue; // a folder (the repository root) or a file made at run time
      if (!target) throw new Error(`${from}: cannot resolve import '${spec}'`);
      edges.push({ from, to: path.relative(ROOT, target).split(path.sep).join('/'), spec });
    }
  }
  return edges;
}

/** The folder of a repository-relative path: src/<folder>/…, 'app' for src/'s own files, else its top folder. */
export function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'src') return parts.length > 2 ? parts[1] : 'app';
  return parts[0];
}

/** Imports that point to a higher layer, to scripts/, or to a folder with no layer, worded for the failure message. */
export function findLayerViolations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const [a, b] = [folderOf(e.from), folderOf(e.to)];
    const where = `${e.from}: import '${e.spec}'`;
    if (a === b) continue;
    if (b === 'scripts') out.push(`${where} reaches scripts/ (scripts may import src, not the other way)`);
    else if (!(a in LAYERS) || !(b in LAYERS)) out.push(`${where} goes from ${a} to ${b}, a folder with no layer`);
    else if (LAYERS[b] > LAYERS[a])
      out.push(`${where} goes up from ${a} (layer ${LAYERS[a]}) to ${b} (layer ${LAYERS[b]})`);
  }
  return out;
}

/** Strongly connected components of more than one node (Tarjan), each sorted. */
export function findCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return cycles;
}

/** The folder graph of the edges: folder → the other folders it imports. */
export function buildFolderGraph(edges: readonly ImportEdge[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    const [a, b] = [folderOf(e.from), folderOf(e.to)];
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
}

const isKnownBackEdge = (e: ImportEdge) => KNOWN_BACK_EDGES.some((k) => k.from === e.from && k.to === e.to);

describe('import graph', () => {
  const all = collectImportEdges();
  const edges = all.filter((e) => !isKnownBackEdge(e));

  it('reads the imports of every kind, and of .svelte files', () => {
    expect(all.length).toBeGreaterThan(1000);
    const has = (from: string, to: string) => all.some((e) => e.from === from && e.to === to);
    expect(has('src/App.svelte', 'workers/client.ts')).toBe(true); // a .svelte script block
    // import() and typeof import()
    expect(has('src/ui/state/TraceState.svelte.ts', 'src/ui/traceExamples.ts')).toBe(true);
    // new URL(…, import.meta.url)
    expect(has('src/envs/ftrl/pyodideExecutor.ts', 'src/envs/ftrl/pyodide.worker.ts')).toBe(true);
    expect(has('src/traces/types.ts', 'src/core/traceTypes.ts')).toBe(true); // export * from
  });

  it('imports only the same or a lower layer, never scripts/', () => {
    expect(findLayerViolations(edges)).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    expect(findCycles(buildFolderGraph(edges))).toEqual([]);
  });

  it('has no import cycle between files (type-only imports included)', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      if (e.from === e.to) continue;
      if (!graph.has(e.from)) graph.set(e.from, new Set());
      graph.get(e.from)!.add(e.to);
    }
    expect(findCycles(graph)).toEqual([]);
  });

  it('lists only back-edges that still exist', () => {
    for (const k of KNOWN_BACK_EDGES) {
      expect(
        all.some((e) => e.from === k.from && e.to === k.to),
        `${k.from} → ${k.to}`,
      ).toBe(true);
    }
  });

  it('fails on a back-edge, on scripts/ and on a cycle between folders', () => {
    const planted: ImportEdge[] = [
      { from: 'src/core/masks.ts', to: 'src/ui/runTime.ts', spec: '../ui/runTime' },
      { from: 'src/cli/rasterize.ts', to: 'scripts/chromium.mjs', spec: '../../scripts/chromium.mjs' },
    ];
    expect(findLayerViolations(planted)).toEqual([
      "src/core/masks.ts: import '../ui/runTime' goes up from core (layer 0) to ui (layer 7)",
      "src/cli/rasterize.ts: import '../../scripts/chromium.mjs' reaches scripts/ " +
        '(scripts may import src, not the other way)',
    ]);
    const sameLayer: ImportEdge[] = [
      { from: 'src/storage/db.ts', to: 'src/experiments/results.ts', spec: '../experiments/results' },
      { from: 'src/experiments/results.ts', to: 'src/storage/db.ts', spec: '../storage/db' },
    ];
    expect(findLayerViolations(sameLayer)).toEqual([]);
    expect(findCycles(buildFolderGraph(sameLayer))).toEqual([['experiments', 'storage']]);
  });
});
