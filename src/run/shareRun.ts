/**
 * One finished run standing for a row of another experiment file whose configuration is the
 * same in every field but its name (the four ablation files' full-PACT rows at q = 0 are one
 * configuration: docs/results.md, "The study"). A run is a deterministic function of its
 * configuration and the code (the same bits on any thread count), so running it again under
 * the other name would only repeat it; the study runs it once and shares it.
 *
 * `shareRun` checks that the two rows' resolved configurations differ only in `name` (and the
 * finished run's config.json is the first of them), then copies the run's files into the other
 * file's results folder with the other row's name in config.json and `same_run_as` in
 * provenance.json, so that `pact table` finds a complete row and a reader sees where it came from.
 *
 *   node --import tsx scripts/shareRun.ts experiments/A.json "RUN_ID" experiments/B.json "RUN_ID" [--results DIR]
 */
import { isDeepStrictEqual } from 'node:util';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expandExperiment, type ExperimentRun } from './experimentFile';

/** Files of a finished run's results folder that are copied (provenance.json is rewritten). */
const RUN_FILES = ['metrics.jsonl', 'config.json'] as const;

function findRun(file: string, id: string): { experiment: string; run: ExperimentRun } {
  const ex = expandExperiment(JSON.parse(fs.readFileSync(file, 'utf8')));
  const run = ex.runs.find((r) => r.id === id);
  if (!run) throw new Error(`shareRun: ${file} has no run "${id}" (its runs: ${ex.runs.map((r) => r.id).join(', ')})`);
  return { experiment: ex.name, run };
}

function withoutName(config: object): Record<string, unknown> {
  const copy = { ...(config as Record<string, unknown>) };
  delete copy.name;
  return copy;
}

/** The fields (dotted paths) where two configurations differ, for the error message. */
function listDifferences(a: unknown, b: unknown, where = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a))
    return [where || '(root)'];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) =>
    listDifferences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], where ? `${where}.${k}` : k),
  );
}

/** `value` with only the object keys `shape` has, at every depth (arrays and scalars as they are). */
function projectOnto(value: unknown, shape: unknown): unknown {
  const isObject = (x: unknown): x is Record<string, unknown> =>
    typeof x === 'object' && x !== null && !Array.isArray(x);
  if (!isObject(value) || !isObject(shape)) return value;
  return Object.fromEntries(Object.keys(shape).map((k) => [k, projectOnto(value[k], shape[k])]));
}

export interface ShareRunResult {
  from: string;
  to: string;
}

export function shareRun(
  fromFile: string,
  fromId: string,
  toFile: string,
  toId: string,
  resultsDir = 'results',
): ShareRunResult {
  const from = findRun(fromFile, fromId);
  const to = findRun(toFile, toId);
  const differ = listDifferences(withoutName(from.run.config), withoutName(to.run.config));
  if (differ.length > 0)
    throw new Error(
      `shareRun: ${from.experiment}/${fromId} and ${to.experiment}/${toId} differ in ${differ.join(', ')}: run it`,
    );
  const src = path.join(resultsDir, from.experiment, 'runs', fromId);
  for (const f of RUN_FILES)
    if (!fs.existsSync(path.join(src, f))) throw new Error(`shareRun: ${src} has no ${f}: the run has not finished`);
  const onDisk = JSON.parse(fs.readFileSync(path.join(src, 'config.json'), 'utf8')) as Record<string, unknown>;
  // A field this code resolves but the run's config.json lacks came after the run's commit
  // (e.g. engineKernels, tasks.testSplit): the run cannot have set it, so only the fields it
  // recorded are compared, at every depth.
  const recorded = projectOnto(withoutName(from.run.config), withoutName(onDisk));
  const onDiskDiffer = listDifferences(withoutName(onDisk), recorded);
  if (onDiskDiffer.length > 0)
    throw new Error(
      `shareRun: ${src}/config.json is not ${fromFile}'s ${fromId} as this code resolves it (${onDiskDiffer.join(', ')})`,
    );
  const dst = path.join(resultsDir, to.experiment, 'runs', toId);
  fs.mkdirSync(dst, { recursive: true });
  fs.copyFileSync(path.join(src, 'metrics.jsonl'), path.join(dst, 'metrics.jsonl'));
  fs.writeFileSync(path.join(dst, 'config.json'), JSON.stringify({ ...onDisk, name: to.run.name }, null, 2) + '\n');
  const provenanceFile = path.join(src, 'provenance.json');
  const provenance = fs.existsSync(provenanceFile)
    ? (JSON.parse(fs.readFileSync(provenanceFile, 'utf8')) as Record<string, unknown>)
    : {};
  fs.writeFileSync(
    path.join(dst, 'provenance.json'),
    JSON.stringify({ ...provenance, same_run_as: `${from.experiment}/${fromId}` }) + '\n',
  );
  return { from: src, to: dst };
}
