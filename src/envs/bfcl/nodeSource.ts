/**
 * Node-only: reads BFCL's backend classes from the user's own copy of BFCL's source (the
 * gorilla repository, github.com/ShishirPatil/gorilla, folder berkeley-function-call-leaderboard;
 * or the `bfcl-eval` package from PyPI), and the BFCL data folder's function docs.
 * PACT Lab ships neither.
 *
 * `--bfcl-src DIR` may name the func_source_code folder itself, or any folder above it on
 * the path `[berkeley-function-call-leaderboard/]bfcl_eval/eval_checker/multi_turn_eval/
 * func_source_code` (older releases: `bfcl/…`). Extra pure-Python packages a backend imports
 * that Pyodide lacks (math_api.py imports `mpmath`) come from `extraPackageDirs`: each a
 * package folder such as `…/site-packages/mpmath`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { resolveDataDir } from '../toolRepo/node';
import {
  BFCL_CLASS_MODULE_FILES,
  BFCL_STATELESS_CLASSES,
  funcDocFileOf,
  parseBfclAnswers,
  parseBfclEntries,
  parseBfclFuncDocs,
  pairBfcl,
  type BfclFuncDoc,
  type BfclPair,
} from './data';
import type { BfclBackendSources } from './pythonBackend';

const TAIL = ['eval_checker', 'multi_turn_eval', 'func_source_code'];

/** Where to get BFCL's backends, for messages. */
export const BFCL_SOURCE_HELP =
  "BFCL's function backends (GorillaFileSystem, MathAPI, TwitterAPI, …) are BFCL's own Python source and are not " +
  "part of PACT Lab or of BFCL's data files. Use your own copy of BFCL's source: `git clone " +
  'https://github.com/ShishirPatil/gorilla` (folder berkeley-function-call-leaderboard) or `pip download bfcl-eval` ' +
  'and unpack it, then pass --bfcl-src with that folder (or its bfcl_eval/eval_checker/multi_turn_eval/func_source_code).';

/** `PACT_DATA_DIR` (else `<repo>/../shared/data`) + `/bfcl`. */
export function resolveBfclDataDir(): string {
  return path.join(resolveDataDir(), 'bfcl');
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The func_source_code folder under `dir` and the dotted package it is (`bfcl_eval.eval_checker.…`). */
export function findFuncSourceDir(dir: string): { folder: string; packageName: string } {
  if (!isDir(dir)) throw new Error(`--bfcl-src ${dir}: not a folder. ${BFCL_SOURCE_HELP}`);
  const candidates: { folder: string; root: string }[] = [];
  for (const base of [dir, path.join(dir, 'berkeley-function-call-leaderboard')])
    for (const root of ['bfcl_eval', 'bfcl']) candidates.push({ folder: path.join(base, root, ...TAIL), root });
  for (const c of candidates)
    if (isDir(c.folder)) return { folder: c.folder, packageName: [c.root, ...TAIL].join('.') };
  if (path.basename(dir) === 'func_source_code') {
    const parts = path.resolve(dir).split(path.sep);
    const root = parts[parts.length - 4] === 'bfcl' ? 'bfcl' : 'bfcl_eval';
    return { folder: dir, packageName: [root, ...TAIL].join('.') };
  }
  throw new Error(
    `--bfcl-src ${dir}: no bfcl_eval/eval_checker/multi_turn_eval/func_source_code folder there. ${BFCL_SOURCE_HELP}`,
  );
}

function addParents(packages: Set<string>, dotted: string): void {
  const parts = dotted.split('.');
  for (let i = 1; i < parts.length; i++) packages.add(parts.slice(0, i).join('.'));
}

/** Adds one package folder's .py files (tests folders skipped) under `packageName`. */
function addPackageFolder(
  modules: Record<string, string>,
  packages: Set<string>,
  folder: string,
  packageName: string,
  isRecursive: boolean,
): void {
  packages.add(packageName);
  addParents(packages, packageName);
  for (const name of readdirSync(folder).sort()) {
    const full = path.join(folder, name);
    if (isDir(full)) {
      if (isRecursive && name !== 'tests' && name !== '__pycache__' && /^[A-Za-z_]\w*$/.test(name))
        addPackageFolder(modules, packages, full, `${packageName}.${name}`, true);
      continue;
    }
    if (!name.endsWith('.py')) continue;
    const stem = name.slice(0, -3);
    const dotted = stem === '__init__' ? packageName : `${packageName}.${stem}`;
    modules[dotted] = readFileSync(full, 'utf8');
  }
}

/**
 * Reads the backend modules. Class → module: BFCL's table for its classes whose file is
 * there, else the module that defines `class Name` at top level.
 */
export function readBfclBackendSources(dir: string, extraPackageDirs: readonly string[] = []): BfclBackendSources {
  const { folder, packageName } = findFuncSourceDir(dir);
  const modules: Record<string, string> = {};
  const packages = new Set<string>();
  addPackageFolder(modules, packages, folder, packageName, false);
  const classModules: Record<string, string> = {};
  for (const [dotted, source] of Object.entries(modules)) {
    if (dotted === packageName) continue;
    for (const m of source.matchAll(/^class\s+([A-Za-z_]\w*)/gm)) classModules[m[1]] ??= dotted;
  }
  for (const [cls, file] of Object.entries(BFCL_CLASS_MODULE_FILES)) {
    const dotted = `${packageName}.${file}`;
    if (modules[dotted] !== undefined) classModules[cls] = dotted;
  }
  for (const extra of extraPackageDirs) {
    if (!existsSync(path.join(extra, '__init__.py')))
      throw new Error(`--py-package ${extra}: not a Python package folder (no __init__.py)`);
    addPackageFolder(modules, packages, extra, path.basename(path.resolve(extra)), true);
  }
  if (Object.keys(classModules).length === 0) throw new Error(`--bfcl-src ${dir}: no backend class in ${folder}`);
  return { modules, packages: [...packages].sort(), classModules, stateless: [...BFCL_STATELESS_CLASSES] };
}

/** One BFCL entry file with its possible answers and the function docs of its classes. */
export interface BfclFileData {
  file: string;
  pairs: BfclPair[];
  docsByClass: Map<string, BfclFuncDoc[]>;
}

/**
 * Reads `DIR/BFCL_v4_multi_turn_X.json`, `DIR/possible_answer/BFCL_v4_multi_turn_X.json` and
 * `DIR/multi_turn_func_doc/*.json` for the entries' classes; checks they line up.
 */
export function readBfclFile(entriesPath: string): BfclFileData {
  const dir = path.dirname(entriesPath);
  const base = path.basename(entriesPath);
  const read = (p: string, what: string) => {
    if (!existsSync(p)) throw new Error(`${what} not found: ${p}`);
    return readFileSync(p, 'utf8');
  };
  const entries = parseBfclEntries(read(entriesPath, 'BFCL entries'), base);
  const answersPath = path.join(dir, 'possible_answer', base);
  const answers = parseBfclAnswers(read(answersPath, 'BFCL possible answers'), `possible_answer/${base}`);
  const pairs = pairBfcl(entries, answers);
  const docsByClass = new Map<string, BfclFuncDoc[]>();
  for (const cls of new Set(entries.flatMap((e) => e.involved_classes))) {
    const file = path.join(dir, 'multi_turn_func_doc', funcDocFileOf(cls));
    docsByClass.set(cls, parseBfclFuncDocs(read(file, `function docs of ${cls}`), path.basename(file)));
  }
  return { file: base, pairs, docsByClass };
}
