/**
 * A run's metric log as a file: `metrics.jsonl`, one JSON object a line, `{"step": N, "<metric>":
 * value, …}` (NaN and ±Infinity written as null, as `pact train` writes them). The Runs panel's
 * checkpoint export puts it beside the checkpoint folder's files, and its import reads it back
 * into the imported run's metric log, so an imported run's curves draw and compare.
 *
 * Reading is for a file someone else wrote: its size, line count, line length and keys per row
 * are bounded, every row is checked, and the first bad one is an error naming its line and field.
 * `pact train`'s own lines (with "type", "run", "recipe" strings) read too; rows of one step
 * (a step and its evaluation) merge, later values winning. Format and limits: docs/runs.md.
 */
import { excerptValue, limitText, setOwn, splitJsonlLines } from '../core/untrustedJson';

/** The metric log's name inside a checkpoint archive or folder. */
export const METRICS_FILE = 'metrics.jsonl';

/** What an imported metric log may hold at most. */
export const METRICS_LIMITS = {
  /** Bytes of the file (a 1,000-step run of ~40 metrics is ~1 MB). */
  bytes: 16 * 1024 * 1024,
  /** Non-blank lines. */
  lines: 100_000,
  /** Characters of one line. */
  lineChars: 256 * 1024,
  /** Metrics of one row. */
  keys: 1000,
  /** Characters of one metric name. */
  keyChars: 200,
} as const;

/** String fields `pact train` writes on its lines; read and ignored. */
const TEXT_FIELDS = new Set(['type', 'run', 'recipe']);

export interface MetricsFileRow {
  step: number;
  values: Record<string, number>;
}

/** A metric log that cannot be read; the message names the file, line and field. */
export class MetricsFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetricsFileError';
  }
}

/** The rows as metrics.jsonl text, by step; non-finite values become null (JSON has no NaN). The row's step wins over a `values.step`. */
export function formatMetricsJsonl(rows: readonly MetricsFileRow[]): string {
  return [...rows]
    .sort((a, b) => a.step - b.step)
    .map((r) => {
      const line: Record<string, number> = { step: r.step };
      for (const [k, v] of Object.entries(r.values)) if (k !== 'step') setOwn(line, k, v);
      return JSON.stringify(line, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)) + '\n';
    })
    .join('');
}

export interface ParsedMetricsFile {
  /** The rows, one per step, ordered by step (null values read back as NaN; `values.step` is the step, as the worker stores it). */
  rows: MetricsFileRow[];
  /** Rows past `maxStep` that were left out (written after the checkpoint was saved). */
  droppedAfter: number;
}

/**
 * Reads metrics.jsonl bytes, all or nothing: any bad line throws a MetricsFileError naming the
 * line and the field. Steps past `maxStep` (the checkpoint's step) are dropped and counted.
 */
export function parseMetricsJsonl(
  bytes: Uint8Array,
  options: { fileName?: string; maxStep?: number } = {},
): ParsedMetricsFile {
  const file = options.fileName ?? METRICS_FILE;
  const L = METRICS_LIMITS;
  if (bytes.length > L.bytes)
    throw new MetricsFileError(`${file} is ${bytes.length} bytes; a metric log may hold at most ${L.bytes}`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new MetricsFileError(`${file} is not UTF-8 text`);
  }
  const lines = splitJsonlLines(text).filter((l) => l.text.trim() !== '');
  if (lines.length > L.lines)
    throw new MetricsFileError(`${file} has ${lines.length} lines; a metric log may hold at most ${L.lines}`);
  const byStep = new Map<number, Record<string, number>>();
  let droppedAfter = 0;
  for (const { line, text: lineText } of lines) {
    const at = `${file} line ${line}`;
    if (lineText.length > L.lineChars)
      throw new MetricsFileError(`${at}: ${lineText.length} characters; a line may hold at most ${L.lineChars}`);
    let obj: unknown;
    try {
      obj = JSON.parse(lineText);
    } catch (e) {
      throw new MetricsFileError(`${at}: not valid JSON (${limitText((e as Error).message, 120)})`);
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
      throw new MetricsFileError(
        `${at}: expected an object {"step": N, "<metric>": number, …}, got ${excerptValue(obj)}`,
      );
    const record = obj as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length > L.keys + 1 + TEXT_FIELDS.size)
      throw new MetricsFileError(`${at}: ${keys.length} fields; a row may hold at most ${L.keys} metrics`);
    const step = record.step;
    if (!Object.hasOwn(record, 'step'))
      throw new MetricsFileError(`${at}: field "step" is missing (every row names its step)`);
    if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 0)
      throw new MetricsFileError(`${at}: field "step" must be an integer ≥ 0, got ${excerptValue(step)}`);
    const values: Record<string, number> = {};
    for (const key of keys) {
      if (key === 'step') continue;
      const v = record[key];
      const field = `field ${excerptValue(key, 80)}`;
      if (key === '__proto__') throw new MetricsFileError(`${at}: ${field}: a metric may not be named "__proto__"`);
      if (key.length > L.keyChars)
        throw new MetricsFileError(`${at}: ${field}: a metric name may hold at most ${L.keyChars} characters`);
      if (TEXT_FIELDS.has(key)) {
        if (typeof v !== 'string') throw new MetricsFileError(`${at}: ${field} must be text, got ${excerptValue(v)}`);
        continue;
      }
      if (v === null) setOwn(values, key, NaN);
      else if (typeof v === 'number') setOwn(values, key, v);
      else throw new MetricsFileError(`${at}: ${field} must be a number or null, got ${excerptValue(v)}`);
    }
    if (options.maxStep !== undefined && step > options.maxStep) {
      droppedAfter++;
      continue;
    }
    // The worker's stored rows carry their step among the values too (StepMetrics.step): so do these.
    const merged = byStep.get(step) ?? { step };
    for (const [k, v] of Object.entries(values)) setOwn(merged, k, v);
    byStep.set(step, merged);
  }
  const rows = [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([step, values]) => ({ step, values }));
  return { rows, droppedAfter };
}

/** The part of a FolderReader this reads (a tar's files, or a picked folder's). */
export interface MetricsSource {
  listFiles(): Promise<string[]>;
  readFile(name: string): Promise<Uint8Array>;
  fileSize?(name: string): Promise<number>;
}

/** What an import found of a metric log: rows, none, or why they were not read (the weights import either way). */
export type ImportedMetrics =
  | { kind: 'rows'; rows: MetricsFileRow[]; droppedAfter: number }
  | { kind: 'none' }
  | { kind: 'unreadable'; reason: string };

/**
 * The metric log of a checkpoint archive or folder, if it has one. Never throws: a file that
 * cannot be read comes back as `unreadable` with the reason (naming its line and field), so
 * the caller can still import the weights and say what was skipped.
 */
export async function readMetricsFile(source: MetricsSource, maxStep: number): Promise<ImportedMetrics> {
  try {
    if (!(await source.listFiles()).includes(METRICS_FILE)) return { kind: 'none' };
    const size = source.fileSize ? await source.fileSize(METRICS_FILE) : undefined;
    if (size !== undefined && size > METRICS_LIMITS.bytes)
      throw new MetricsFileError(
        `${METRICS_FILE} is ${size} bytes; a metric log may hold at most ${METRICS_LIMITS.bytes}`,
      );
    const parsed = parseMetricsJsonl(await source.readFile(METRICS_FILE), { maxStep });
    return { kind: 'rows', ...parsed };
  } catch (e) {
    return { kind: 'unreadable', reason: e instanceof Error ? e.message : String(e) };
  }
}
