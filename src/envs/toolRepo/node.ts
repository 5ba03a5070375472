/**
 * Node loader for StableToolBench: reads `<dataDir>/stabletoolbench/test_instruction/G*.json`
 * and the matching `test_query_ids/G*.json`, then builds the repository with
 * `buildStableToolBenchRepo`. `dataDir` defaults to `process.env.PACT_DATA_DIR` or
 * `<repo>/../shared/data`. Node only (uses `fs`); the browser passes parsed files itself.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildStableToolBenchRepo, parseGroupFromFileName } from './stableToolBench';
import type { StableToolBenchFile, StableToolBenchOptions, StableToolBenchResult } from './stableToolBench';
import type { RepoProblem } from './types';

/** The repository root: three folders above `src/envs/toolRepo`. */
function resolveRepoRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
}

/** `PACT_DATA_DIR`, else `<repo>/../shared/data`. */
export function resolveDataDir(): string {
  return process.env.PACT_DATA_DIR ?? path.resolve(resolveRepoRoot(), '..', 'shared', 'data');
}

/** The folder holding `test_instruction/` and `test_query_ids/`. */
export function resolveStableToolBenchDir(dataDir: string = resolveDataDir()): string {
  return path.join(dataDir, 'stabletoolbench');
}

export function hasStableToolBenchData(dataDir: string = resolveDataDir()): boolean {
  return existsSync(path.join(resolveStableToolBenchDir(dataDir), 'test_instruction'));
}

/**
 * Reads every known group file. Throws (naming the path) only when the
 * `test_instruction` folder is missing; unreadable or malformed JSON files become
 * problems in the result.
 */
export function loadStableToolBench(
  dataDir: string = resolveDataDir(),
  options: StableToolBenchOptions = {},
): StableToolBenchResult {
  const root = resolveStableToolBenchDir(dataDir);
  const instructionDir = path.join(root, 'test_instruction');
  if (!existsSync(instructionDir)) {
    throw new Error(`StableToolBench data not found: ${instructionDir} does not exist (set PACT_DATA_DIR)`);
  }
  const files: StableToolBenchFile[] = [];
  const problems: RepoProblem[] = [];
  for (const entry of readdirSync(instructionDir).sort()) {
    if (!entry.endsWith('.json')) continue;
    const fileName = `test_instruction/${entry}`;
    const group = parseGroupFromFileName(entry);
    if (!group) {
      problems.push({
        file: fileName,
        index: -1,
        path: '(file)',
        message: 'not a StableToolBench group name; skipped',
      });
      continue;
    }
    const instructions = readJson(path.join(instructionDir, entry), fileName, problems);
    if (instructions === undefined) continue;
    const file: StableToolBenchFile = { fileName, group, instructions };
    const idsPath = path.join(root, 'test_query_ids', entry);
    if (existsSync(idsPath)) {
      const idsName = `test_query_ids/${entry}`;
      const queryIds = readJson(idsPath, idsName, problems);
      if (queryIds !== undefined) {
        file.queryIds = queryIds;
        file.queryIdsFileName = idsName;
      }
    }
    files.push(file);
  }
  const result = buildStableToolBenchRepo(files, options);
  return { ...result, problems: [...problems, ...result.problems] };
}

function readJson(filePath: string, fileName: string, problems: RepoProblem[]): unknown {
  try {
    return JSON.parse(readFileSync(filePath, 'utf8'));
  } catch (error) {
    problems.push({
      file: fileName,
      index: -1,
      path: '(file)',
      message: `cannot read JSON: ${(error as Error).message}`,
    });
    return undefined;
  }
}
