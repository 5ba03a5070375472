/**
 * Seeded generator of built-in tool-use tasks in FTRL's four categories
 * (FTRL's data: single_hop, multi_hop, parallel_single_hop, parallel_multi_hop).
 *
 * Simplification: the questions are templated English, not paraphrased; a parallel list
 * answer joins the branch answers with ", " (FTRL's answer check splits on ", ").
 *
 * The four categories and what a task carries: docs/envs.md.
 */
import { createRng, shuffleInPlace, type Rng } from '../core/rng';
import type { Task, TaskCategory, ToolCall, ToolSchema } from './types';
import { TASK_CATEGORIES } from './types';
import {
  buildToolCatalog,
  computeCalculator,
  computeConvertUnits,
  computeDateDifference,
  convertNumber,
  ENTITY_PARAM,
  entityCount,
  entityName,
  isEntityType,
  type EntityType,
  type Relation,
  type TaskLength,
  type ToolCatalog,
  type UnitOption,
} from './toolFamilies';
import { generateWorld, type WorldSplit } from './world';

/** A count, or an inclusive [min, max] range drawn per task. */
export type CountKnob = number | [number, number];

export interface GeneratorOptions {
  seed: number;
  split?: WorldSplit;
  /** Categories to draw from, cycled in order (task i gets categories[i % length]). */
  categories?: readonly TaskCategory[];
  /** Lookups per chain in multi-hop categories (≥ 2). Default 2 short, [2, 4] long. */
  hops?: CountKnob;
  /** Branches in parallel categories (≥ 2). Default 2 short, [2, 3] long. */
  branches?: CountKnob;
  /** Distractor tools added to each task. Default 2 short, 6 long. */
  distractors?: CountKnob;
  /** Tool wording: short (for qwen3-nano) or long (bigger models). Default short. */
  length?: TaskLength;
}

interface ResolvedOptions {
  split: WorldSplit;
  categories: readonly TaskCategory[];
  hops: CountKnob;
  branches: CountKnob;
  distractors: CountKnob;
  length: TaskLength;
}

/** One value flowing through a chain: an entity or a primitive answer. */
type Value =
  | { kind: 'entity'; type: EntityType; index: number; text: string }
  | { kind: 'number'; value: number; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'date'; text: string };

interface Chain {
  phrase: string;
  calls: ToolCall[];
  /** The answer of each call, in order (tool name, answer text). */
  answers: [string, string][];
  result: Value;
}

type EndKind = 'any' | 'number' | 'date' | 'entity';

const MAX_TRIES = 200;

function drawCount(rng: Rng, knob: CountKnob, what: string, min: number): number {
  const [lo, hi] = typeof knob === 'number' ? [knob, knob] : knob;
  if (!Number.isInteger(lo) || !Number.isInteger(hi) || lo < min || hi < lo) {
    throw new Error(
      `generator: ${what} must be an integer ≥ ${min} or a range [min, max] with ${min} ≤ min ≤ max; got ${JSON.stringify(knob)}`,
    );
  }
  return lo + rng.int(hi - lo + 1);
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)];
}

function relationsFrom(catalog: ToolCatalog, type: EntityType): Relation[] {
  return catalog.relations.filter((r) => r.from === type);
}

function matchesEnd(r: Relation, end: EndKind): boolean {
  if (end === 'any') return true;
  if (end === 'entity') return isEntityType(r.to);
  return r.to === end;
}

/** Applies relation `r` to entity `subject`, with a unit option for numeric relations. */
function applyRelation(
  catalog: ToolCatalog,
  r: Relation,
  subject: Value & { kind: 'entity' },
  unit: UnitOption | undefined,
): { call: ToolCall; value: Value } {
  const world = catalog.world;
  const raw = r.read(world, subject.index);
  const args: Record<string, unknown> = { [ENTITY_PARAM[r.from]]: subject.text };
  let value: Value;
  if (isEntityType(r.to)) {
    const index = raw as number;
    value = { kind: 'entity', type: r.to, index, text: entityName(world, r.to, index) };
  } else if (r.to === 'number') {
    let n = raw as number;
    if (unit) {
      n = convertNumber(n, unit);
      if (r.units && unit !== r.units[0]) args.unit = unit.unit;
    }
    value = { kind: 'number', value: n, text: String(n) };
  } else if (r.to === 'date') {
    value = { kind: 'date', text: raw as string };
  } else {
    value = { kind: 'text', text: raw as string };
  }
  return { call: { name: r.tool, arguments: args }, value };
}

function drawEntity(rng: Rng, catalog: ToolCatalog, type: EntityType): Value & { kind: 'entity' } {
  const index = rng.int(entityCount(catalog.world, type));
  return { kind: 'entity', type, index, text: entityName(catalog.world, type, index) };
}

const ENTITY_TYPES: readonly EntityType[] = ['person', 'city', 'country', 'org'];

/** Whether some chain of exactly `hops` lookups from `type` ends in a value of kind `end`. */
function canReach(catalog: ToolCatalog, type: EntityType, hops: number, end: EndKind): boolean {
  const from = relationsFrom(catalog, type);
  if (hops <= 1) return from.some((r) => matchesEnd(r, end));
  return from.some((r) => isEntityType(r.to) && canReach(catalog, r.to, hops - 1, end));
}

/**
 * A chain of `hops` lookups from a random entity, ending in a value of kind `end`.
 * Its entities are distinct and not in `used` (the entities of the other branches, so
 * no two branches make the same call); they are added to `used`.
 */
function buildChain(rng: Rng, catalog: ToolCatalog, hops: number, end: EndKind, used: Set<string>): Chain {
  const types = ENTITY_TYPES.filter((t) => canReach(catalog, t, hops, end));
  if (types.length === 0) throw new Error(`generator: no ${hops}-hop chain can end in ${end}`);
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    let current: Value & { kind: 'entity' } = drawEntity(rng, catalog, pick(rng, types));
    if (used.has(current.text)) continue;
    const visited = new Set([current.text]);
    let phrase = current.text;
    const calls: ToolCall[] = [];
    const answers: [string, string][] = [];
    let result: Value | undefined;
    let ok = true;
    for (let hop = 0; hop < hops; hop++) {
      const isLast = hop === hops - 1;
      const hopsLeft = hops - hop - 1;
      const options = relationsFrom(catalog, current.type).filter((r) =>
        isLast ? matchesEnd(r, end) : isEntityType(r.to) && canReach(catalog, r.to, hopsLeft, end),
      );
      if (options.length === 0) {
        ok = false;
        break;
      }
      const r = pick(rng, options);
      const unit = r.units ? pick(rng, r.units) : undefined;
      const { call, value } = applyRelation(catalog, r, current, unit);
      if (value.kind === 'entity' && (visited.has(value.text) || used.has(value.text))) {
        ok = false;
        break;
      }
      phrase = r.phrase.replace('{x}', phrase) + (unit ? unit.phraseSuffix : '');
      calls.push(call);
      answers.push([call.name, value.text]);
      if (value.kind === 'entity') {
        visited.add(value.text);
        current = value;
      }
      result = value;
    }
    if (!ok || !result) continue;
    for (const name of visited) used.add(name);
    return { phrase, calls, answers, result };
  }
  throw new Error(`generator: could not build a ${hops}-hop chain ending in ${end} after ${MAX_TRIES} tries`);
}

function joinPhrases(phrases: string[]): string {
  if (phrases.length <= 2) return phrases.join(' and ');
  return `${phrases.slice(0, -1).join(', ')} and ${phrases[phrases.length - 1]}`;
}

interface TaskBody {
  question: string;
  calls: ToolCall[];
  answers: [string, string][];
  answer: string;
}

function buildSequentialTask(rng: Rng, catalog: ToolCatalog, hops: number): TaskBody {
  // Multi-hop chains sometimes end in a unit conversion of an elevation (meters → kilometers).
  const withConversion = hops >= 2 && rng.next() < 0.2;
  if (withConversion) {
    const base = buildChain(rng, catalog, hops - 1, 'entity', new Set());
    if (base.result.kind === 'entity' && base.result.type === 'city') {
      const elevation = catalog.relations.find((r) => r.id === 'elevation')!;
      const meters = elevation.units![0];
      const { call, value } = applyRelation(catalog, elevation, base.result, meters);
      const n = (value as { value: number }).value;
      const km = computeConvertUnits(n, 'meters', 'kilometers');
      const convert: ToolCall = {
        name: 'convert_units',
        arguments: { value: n, from_unit: 'meters', to_unit: 'kilometers' },
      };
      const phrase = elevation.phrase.replace('{x}', base.phrase);
      return {
        question: `What is ${phrase} in kilometers?`,
        calls: [...base.calls, call, convert],
        answers: [...base.answers, [call.name, value.text], ['convert_units', String(km)]],
        answer: String(km),
      };
    }
  }
  const chain = buildChain(rng, catalog, hops, 'any', new Set());
  return {
    question: `What is ${chain.phrase}?`,
    calls: chain.calls,
    answers: chain.answers,
    answer: chain.result.text,
  };
}

type Aggregation = 'list' | 'sum' | 'difference' | 'max' | 'days';

function buildParallelTask(rng: Rng, catalog: ToolCatalog, branches: number, hopsOf: () => number): TaskBody {
  const aggregations: Aggregation[] =
    branches === 2 ? ['list', 'sum', 'difference', 'max', 'days'] : ['list', 'sum', 'max'];
  const aggregation = pick(rng, aggregations);
  const end: EndKind = aggregation === 'list' ? 'any' : aggregation === 'days' ? 'date' : 'number';
  const used = new Set<string>();
  const chains: Chain[] = [];
  // Parallel single-hop branches often ask the same relation of different entities.
  const sameRelation = rng.next() < 0.5;
  for (let b = 0; b < branches; b++) {
    const hops = hopsOf();
    if (sameRelation && hops === 1 && chains.length > 0) {
      const first = chains[0].calls[0];
      const r = catalog.relations.find((x) => x.tool === first.name)!;
      const chain = buildSameRelationBranch(rng, catalog, r, first, used);
      if (chain) {
        chains.push(chain);
        continue;
      }
    }
    chains.push(buildChain(rng, catalog, hops, end, used));
  }
  const phrases = chains.map((c) => c.phrase);
  const calls = chains.flatMap((c) => c.calls);
  const answers = chains.flatMap((c) => c.answers);
  if (aggregation === 'list') {
    const answer = chains.map((c) => c.result.text).join(', ');
    return { question: `What are ${joinPhrases(phrases)}?`, calls, answers, answer };
  }
  if (aggregation === 'days') {
    const [a, b] = chains.map((c) => c.result.text);
    const days = computeDateDifference(a, b, 'days');
    return {
      question: `How many days apart are ${phrases[0]} and ${phrases[1]}?`,
      calls: [...calls, { name: 'date_difference', arguments: { start_date: a, end_date: b } }],
      answers: [...answers, ['date_difference', String(days)]],
      answer: String(days),
    };
  }
  const numbers = chains.map((c) => (c.result as { value: number }).value);
  const operation = aggregation === 'sum' ? 'add' : aggregation === 'difference' ? 'subtract' : 'max';
  const result = computeCalculator(operation, numbers);
  const question =
    aggregation === 'sum'
      ? `What is the sum of ${joinPhrases(phrases)}?`
      : aggregation === 'difference'
        ? `What is ${phrases[0]} minus ${phrases[1]}?`
        : `What is the largest number among ${joinPhrases(phrases)}?`;
  return {
    question,
    calls: [...calls, { name: 'calculator', arguments: { operation, numbers } }],
    answers: [...answers, ['calculator', String(result)]],
    answer: String(result),
  };
}

/** A one-hop branch asking relation `r` (same unit as `first`) of a new entity. */
function buildSameRelationBranch(
  rng: Rng,
  catalog: ToolCatalog,
  r: Relation,
  first: ToolCall,
  used: Set<string>,
): Chain | null {
  const unitName = first.arguments.unit;
  const unit = r.units ? (r.units.find((u) => u.unit === unitName) ?? r.units[0]) : undefined;
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const subject = drawEntity(rng, catalog, r.from);
    if (used.has(subject.text)) continue;
    used.add(subject.text);
    const { call, value } = applyRelation(catalog, r, subject, unit);
    const phrase = r.phrase.replace('{x}', subject.text) + (unit ? unit.phraseSuffix : '');
    return { phrase, calls: [call], answers: [[call.name, value.text]], result: value };
  }
  return null;
}

/** Picks the task's tools: gold tools, then near-duplicates of them, then any others. */
function chooseTools(
  rng: Rng,
  catalog: ToolCatalog,
  gold: string[],
  distractorCount: number,
  length: TaskLength,
): ToolSchema[] {
  const chosen = new Set(gold);
  const nearDuplicates: string[] = [];
  for (const g of gold) {
    for (const d of catalog.nearDuplicates.get(g) ?? [])
      if (!chosen.has(d) && !nearDuplicates.includes(d)) nearDuplicates.push(d);
  }
  shuffleInPlace(rng, nearDuplicates);
  const others = shuffleInPlace(
    rng,
    [...catalog.tools.keys()].filter((n) => !chosen.has(n) && !nearDuplicates.includes(n)),
  );
  for (const name of [...nearDuplicates, ...others]) {
    if (chosen.size >= gold.length + distractorCount) break;
    chosen.add(name);
  }
  const names = shuffleInPlace(rng, [...chosen]);
  return names.map((n) => catalog.tools.get(n)!.schemas[length]);
}

function resolveOptions(options: GeneratorOptions): ResolvedOptions {
  const length = options.length ?? 'short';
  if (length !== 'short' && length !== 'long')
    throw new Error(`generator: length must be "short" or "long", got ${JSON.stringify(length)}`);
  const categories = options.categories ?? TASK_CATEGORIES;
  if (categories.length === 0) throw new Error('generator: categories must not be empty');
  for (const c of categories) {
    if (!TASK_CATEGORIES.includes(c))
      throw new Error(`generator: unknown category "${c}"; valid categories: ${TASK_CATEGORIES.join(', ')}`);
  }
  return {
    split: options.split ?? 'train',
    categories,
    hops: options.hops ?? (length === 'short' ? 2 : [2, 4]),
    branches: options.branches ?? (length === 'short' ? 2 : [2, 3]),
    distractors: options.distractors ?? (length === 'short' ? 2 : 6),
    length,
  };
}

/** A generator bound to one world: `taskAt(i)` is task i of (split, seed). */
export interface TaskGenerator {
  catalog: ToolCatalog;
  taskAt(index: number): Task;
}

export function createTaskGenerator(options: GeneratorOptions): TaskGenerator {
  if (!Number.isInteger(options.seed))
    throw new Error(`generator: seed must be an integer, got ${String(options.seed)}`);
  const o = resolveOptions(options);
  const world = generateWorld(options.seed, o.split);
  const catalog = buildToolCatalog(world);
  const root = createRng(`tasks/${o.split}/${options.seed}`);
  const taskAt = (index: number): Task => {
    const rng = root.split(`task${index}`);
    const category = o.categories[index % o.categories.length];
    let body: TaskBody;
    if (category === 'single_hop') {
      body = buildSequentialTask(rng, catalog, 1);
    } else if (category === 'multi_hop') {
      body = buildSequentialTask(rng, catalog, drawCount(rng, o.hops, 'hops', 2));
    } else {
      const branches = drawCount(rng, o.branches, 'branches', 2);
      const hopsOf = category === 'parallel_single_hop' ? () => 1 : () => drawCount(rng, o.hops, 'hops', 2);
      body = buildParallelTask(rng, catalog, branches, hopsOf);
    }
    const unsolvedSet: Record<string, string[]> = {};
    for (const [tool, answer] of body.answers) (unsolvedSet[tool] ??= []).push(answer);
    const gold = [...new Set(body.calls.map((c) => c.name))];
    const distractorCount = drawCount(rng, o.distractors, 'distractors', 0);
    const tools = chooseTools(rng, catalog, gold, distractorCount, o.length);
    const implementations: Task['implementations'] = {};
    for (const t of tools) implementations[t.function.name] = catalog.tools.get(t.function.name)!.implementation;
    return {
      id: `gen-${o.split}-${options.seed}-${index}`,
      question: body.question,
      tools,
      implementations,
      unsolvedSet,
      answer: body.answer,
      category,
      goldCalls: body.calls,
      source: `generated:${o.split}/${options.seed}`,
    };
  };
  return { catalog, taskAt };
}

/** Tasks 0..n-1 of (split, seed). Same options → identical tasks. */
export function generateTasks(options: GeneratorOptions & { n: number }): Task[] {
  if (!Number.isInteger(options.n) || options.n < 0)
    throw new Error(`generator: n must be a non-negative integer, got ${String(options.n)}`);
  const gen = createTaskGenerator(options);
  const tasks: Task[] = [];
  for (let i = 0; i < options.n; i++) tasks.push(gen.taskAt(i));
  return tasks;
}
