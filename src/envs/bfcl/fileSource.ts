/**
 * BFCL's data and backend sources from a list of picked files (the app's folder pickers,
 * `<input webkitdirectory>`: each file with its path inside the picked folder), for the
 * browser as nodeSource.ts reads them from disk for `pact eval-bfcl`. Pure: a file is a path
 * and a `read()`; only the files needed are read.
 *
 * Data: every `BFCL_v4_multi_turn_<category>.json` at the top of the picked data folder, its
 * `possible_answer/<same name>` and the `multi_turn_func_doc/*.json` of its classes (BFCL's
 * layout, as readBfclFile in nodeSource.ts). Sources: the `.py` files directly in the
 * `bfcl_eval/eval_checker/multi_turn_eval/func_source_code` folder (older releases: `bfcl/…`)
 * found anywhere under the picked folder, mapped to classes as nodeSource.ts does (BFCL's
 * table first, else the module defining `class Name`). Extra pure-Python packages
 * (`--py-package`) are not offered here: MathAPI, which imports mpmath, does not load.
 */
import {
  BFCL_CLASS_MODULE_FILES,
  BFCL_STATELESS_CLASSES,
  funcDocFileOf,
  pairBfcl,
  parseBfclAnswers,
  parseBfclEntries,
  parseBfclFuncDocs,
  type BfclFuncDoc,
  type BfclPair,
} from './data';
import type { BfclBackendSources } from './pythonBackend';

/** A picked file: its path inside the picked folder (`webkitRelativePath`, `/`-separated, folder name first). */
export interface PickedTextFile {
  path: string;
  read(): Promise<string>;
}

/** The texts of one entry file and its possible answers, as sent to the worker. */
export interface BfclDataFileTexts {
  file: string;
  entries: string;
  answers: string;
}

/** What the evaluation needs of a data folder: its entry files and the function docs (file name → text). */
export interface BfclDataTexts {
  files: BfclDataFileTexts[];
  funcDocs: Record<string, string>;
}

const ENTRY_FILE = /^BFCL_v4_multi_turn_[A-Za-z0-9_]+\.json$/;
const SOURCE_TAIL = ['eval_checker', 'multi_turn_eval', 'func_source_code'];

/** The path after the picked folder's own name (`data/possible_answer/x.json` → `possible_answer/x.json`). */
function innerPath(p: string): string {
  const parts = p.split('/').filter((s) => s !== '');
  return parts.slice(1).join('/');
}

/**
 * Reads a picked BFCL data folder: the multi-turn entry files at its top, each with its
 * possible answers, and the function docs their entries' classes need. Throws naming what is
 * missing (no entry file; an answers or docs file).
 */
export async function readBfclDataFolder(files: readonly PickedTextFile[]): Promise<BfclDataTexts> {
  const byPath = new Map(files.map((f) => [innerPath(f.path), f]));
  const entryNames = [...byPath.keys()].filter((p) => ENTRY_FILE.test(p)).sort();
  if (entryNames.length === 0)
    throw new Error(
      "no BFCL_v4_multi_turn_<category>.json at the top of this folder: pick BFCL's data folder (bfcl_eval/data), " +
        'which holds the entry files, possible_answer/ and multi_turn_func_doc/',
    );
  const out: BfclDataTexts = { files: [], funcDocs: {} };
  const classes = new Set<string>();
  for (const name of entryNames) {
    const answers = byPath.get(`possible_answer/${name}`);
    if (!answers) throw new Error(`${name}: its possible answers (possible_answer/${name}) are not in this folder`);
    const entries = await byPath.get(name)!.read();
    for (const e of parseBfclEntries(entries, name)) for (const c of e.involved_classes) classes.add(c);
    out.files.push({ file: name, entries, answers: await answers.read() });
  }
  for (const cls of [...classes].sort()) {
    const doc = funcDocFileOf(cls);
    const f = byPath.get(`multi_turn_func_doc/${doc}`);
    if (!f) throw new Error(`the function docs of ${cls} (multi_turn_func_doc/${doc}) are not in this folder`);
    out.funcDocs[doc] ??= await f.read();
  }
  return out;
}

/** One entry file ready for src/run/bfclEval.ts (its BfclEvalFile). */
export interface BfclParsedFile {
  file: string;
  pairs: BfclPair[];
  docsByClass: Map<string, BfclFuncDoc[]>;
}

/** Parses the texts (page and worker both); `limit`: the first N entries of each file. */
export function parseBfclDataTexts(texts: BfclDataTexts, limit?: number): BfclParsedFile[] {
  const docs = new Map<string, BfclFuncDoc[]>();
  return texts.files.map(({ file, entries, answers }) => {
    const all = pairBfcl(parseBfclEntries(entries, file), parseBfclAnswers(answers, `possible_answer/${file}`));
    const pairs = limit === undefined ? all : all.slice(0, limit);
    const docsByClass = new Map<string, BfclFuncDoc[]>();
    for (const cls of new Set(all.flatMap((p) => p.entry.involved_classes))) {
      const name = funcDocFileOf(cls);
      const text = texts.funcDocs[name];
      if (text === undefined) throw new Error(`${file}: no function docs for ${cls} (multi_turn_func_doc/${name})`);
      if (!docs.has(name)) docs.set(name, parseBfclFuncDocs(text, name));
      docsByClass.set(cls, docs.get(name)!);
    }
    return { file, pairs, docsByClass };
  });
}

/**
 * The backend modules under a picked copy of BFCL's source (the gorilla repository, its
 * berkeley-function-call-leaderboard folder, the unpacked bfcl-eval package, or the
 * func_source_code folder itself). Throws with where to get it when no backend is there.
 */
export async function readBfclSourceFolder(files: readonly PickedTextFile[]): Promise<BfclBackendSources> {
  // The func_source_code folder: the shortest path ending in <root>/eval_checker/multi_turn_eval/func_source_code.
  let best: { dir: string; packageName: string } | null = null;
  for (const f of files) {
    const parts = f.path.split('/').filter((s) => s !== '');
    for (let i = parts.length - 2; i >= 0; i--) {
      if (parts[i] !== 'func_source_code') continue;
      const dir = parts.slice(0, i + 1).join('/');
      const root = i >= 3 && parts.slice(i - 2, i + 1).join('/') === SOURCE_TAIL.join('/') ? parts[i - 3] : null;
      const packageName = [root === 'bfcl' ? 'bfcl' : 'bfcl_eval', ...SOURCE_TAIL].join('.');
      if (!best || dir.length < best.dir.length) best = { dir, packageName };
    }
  }
  if (!best)
    throw new Error(
      "no bfcl_eval/eval_checker/multi_turn_eval/func_source_code folder in the picked folder. BFCL's function " +
        "backends (GorillaFileSystem, TwitterAPI, …) are BFCL's own Python source, not part of PACT Lab: pick your " +
        'copy of github.com/ShishirPatil/gorilla (folder berkeley-function-call-leaderboard) or of the unpacked ' +
        'bfcl-eval package',
    );
  const { dir, packageName } = best;
  const modules: Record<string, string> = {};
  for (const f of files) {
    if (!f.path.startsWith(`${dir}/`)) continue;
    const rest = f.path.slice(dir.length + 1);
    if (rest.includes('/') || !rest.endsWith('.py')) continue;
    const stem = rest.slice(0, -3);
    modules[stem === '__init__' ? packageName : `${packageName}.${stem}`] = await f.read();
  }
  const classModules: Record<string, string> = {};
  for (const dotted of Object.keys(modules).sort()) {
    if (dotted === packageName) continue;
    for (const m of modules[dotted].matchAll(/^class\s+([A-Za-z_]\w*)/gm)) classModules[m[1]] ??= dotted;
  }
  for (const [cls, file] of Object.entries(BFCL_CLASS_MODULE_FILES))
    if (modules[`${packageName}.${file}`] !== undefined) classModules[cls] = `${packageName}.${file}`;
  if (Object.keys(classModules).length === 0) throw new Error(`no backend class in ${dir}`);
  const packages = new Set<string>();
  const parts = packageName.split('.');
  for (let i = 1; i <= parts.length; i++) packages.add(parts.slice(0, i).join('.'));
  return { modules, packages: [...packages].sort(), classModules, stateless: [...BFCL_STATELESS_CLASSES] };
}
