/**
 * BFCL v4 multi-turn data (Berkeley Function Calling Leaderboard, Patil et al.): the test
 * entries (`BFCL_v4_multi_turn_<category>.json`, one JSON object a line), their ground-truth
 * call sequences (`possible_answer/<same name>`) and the function docs of each backend class
 * (`multi_turn_func_doc/<file>.json`). Parsing only; the benchmark's files are never shipped
 * with PACT Lab (tests read them from $PACT_DATA_DIR or ../shared/data).
 *
 * What the model is given follows BFCL's `populate_test_cases_with_predefined_functions`
 * (bfcl_eval/utils.py in ShishirPatil/gorilla): the docs of every involved class, in
 * `involved_classes` order; for `missed_function` entries (miss_func) the named functions
 * are held out and handed back at their turn, whose user message is empty and replaced by
 * BFCL's DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC. `excluded_function` is not applied
 * (BFCL's loader does not apply it either).
 */

/** One chat message of a BFCL turn. */
export interface BfclMessage {
  role: string;
  content: string;
}

/** A BFCL function doc as the data holds it (`parameters.type` is "dict", numbers "float"). */
export interface BfclFuncDoc {
  name: string;
  description?: string;
  parameters?: unknown;
  response?: unknown;
  [key: string]: unknown;
}

export interface BfclEntry {
  id: string;
  /** One list of messages per user turn (empty for a miss_func holdout turn). */
  question: BfclMessage[][];
  initial_config: Record<string, unknown>;
  involved_classes: string[];
  /** Turn index (as a string) → names of functions held out until that turn. */
  missed_function?: Record<string, string[]>;
  excluded_function?: string[];
  /** The entry's own JSON line (its numbers as written: `10.0` stays a float in Python). */
  rawJson?: string;
}

/** The ground truth of one entry: per turn, BFCL call strings such as `cd(folder='document')`. */
export interface BfclAnswer {
  id: string;
  ground_truth: string[][];
}

/** BFCL's user message of a miss_func holdout turn (constants/default_prompts.py). */
export const DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC =
  'I have updated some more functions you can choose from. What about now?';

/** BFCL's per-turn step limit (MAXIMUM_STEP_LIMIT): more steps force-terminate the entry. */
export const MAXIMUM_STEP_LIMIT = 20;

/** Class → func doc file (BFCL's MULTI_TURN_FUNC_DOC_FILE_MAPPING, multi-turn classes). */
export const BFCL_FUNC_DOC_FILES: Readonly<Record<string, string>> = {
  GorillaFileSystem: 'gorilla_file_system.json',
  MathAPI: 'math_api.json',
  MessageAPI: 'message_api.json',
  TwitterAPI: 'posting_api.json',
  TicketAPI: 'ticket_api.json',
  TradingBot: 'trading_bot.json',
  TravelAPI: 'travel_booking.json',
  VehicleControlAPI: 'vehicle_control.json',
};

/** Class → module file in func_source_code/ (BFCL's CLASS_FILE_PATH_MAPPING, multi-turn classes). */
export const BFCL_CLASS_MODULE_FILES: Readonly<Record<string, string>> = {
  GorillaFileSystem: 'gorilla_file_system',
  MathAPI: 'math_api',
  MessageAPI: 'message_api',
  TwitterAPI: 'posting_api',
  TicketAPI: 'ticket_api',
  TradingBot: 'trading_bot',
  TravelAPI: 'travel_booking',
  VehicleControlAPI: 'vehicle_control',
};

/** Classes BFCL never calls `_load_scenario` on (STATELESS_CLASSES). */
export const BFCL_STATELESS_CLASSES: readonly string[] = ['MathAPI', 'WebSearchAPI'];

/** The func doc file of a class: BFCL's table, else snake_case of the name (`SimpleCounterAPI` → `simple_counter_api.json`). */
export function funcDocFileOf(className: string): string {
  const known = BFCL_FUNC_DOC_FILES[className];
  if (known) return known;
  const snake = className
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
  return `${snake}.json`;
}

/** The category of an entry id, as BFCL reads it: `multi_turn_base_12` → `multi_turn_base`. */
export function bfclCategoryOf(id: string): string {
  const cut = id.lastIndexOf('_');
  return cut > 0 ? id.slice(0, cut) : id;
}

/** Whether BFCL loads this entry's backends with `long_context=True`. */
export function isLongContextCategory(category: string): boolean {
  return category.includes('long_context') || category.includes('composite');
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function parseLines(text: string, what: string, lines?: string[]): unknown[] {
  const out: unknown[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line));
      lines?.push(line);
    } catch (e) {
      throw new Error(`${what}, line ${i + 1}: not JSON (${e instanceof Error ? e.message : String(e)})`);
    }
  });
  return out;
}

function isStringArray(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string');
}

/** Parses a BFCL multi-turn entry file (JSON lines); throws naming the line on a malformed entry. */
export function parseBfclEntries(text: string, what = 'entries'): BfclEntry[] {
  const lines: string[] = [];
  return parseLines(text, what, lines).map((raw, i) => {
    const where = `${what}, entry ${i + 1}`;
    if (!isRecord(raw)) throw new Error(`${where}: not an object`);
    if (typeof raw.id !== 'string') throw new Error(`${where}: no string "id"`);
    const question = raw.question;
    if (
      !Array.isArray(question) ||
      !question.every(
        (turn) =>
          Array.isArray(turn) &&
          turn.every((m) => isRecord(m) && typeof m.role === 'string' && typeof m.content === 'string'),
      )
    )
      throw new Error(`${where} (${raw.id}): "question" must be a list of turns, each a list of {role, content}`);
    if (!isStringArray(raw.involved_classes) || raw.involved_classes.length === 0)
      throw new Error(`${where} (${raw.id}): "involved_classes" must be a non-empty list of class names`);
    const config = raw.initial_config ?? {};
    if (!isRecord(config)) throw new Error(`${where} (${raw.id}): "initial_config" must be an object`);
    const entry: BfclEntry = {
      id: raw.id,
      question: question as BfclMessage[][],
      initial_config: config,
      involved_classes: raw.involved_classes,
      rawJson: lines[i],
    };
    if (raw.missed_function !== undefined) {
      const missed = raw.missed_function;
      if (!isRecord(missed) || !Object.values(missed).every(isStringArray))
        throw new Error(`${where} (${raw.id}): "missed_function" must map turn indices to lists of names`);
      entry.missed_function = missed as Record<string, string[]>;
    }
    if (isStringArray(raw.excluded_function)) entry.excluded_function = raw.excluded_function;
    return entry;
  });
}

/** Parses a BFCL possible_answer file (JSON lines of `{id, ground_truth: string[][]}`). */
export function parseBfclAnswers(text: string, what = 'possible answers'): BfclAnswer[] {
  return parseLines(text, what).map((raw, i) => {
    const where = `${what}, entry ${i + 1}`;
    if (!isRecord(raw) || typeof raw.id !== 'string') throw new Error(`${where}: no string "id"`);
    const gt = raw.ground_truth;
    if (!Array.isArray(gt) || !gt.every(isStringArray))
      throw new Error(`${where} (${raw.id}): "ground_truth" must be a list of turns, each a list of call strings`);
    return { id: raw.id, ground_truth: gt };
  });
}

/** Parses a func doc file (JSON lines of function docs). */
export function parseBfclFuncDocs(text: string, what = 'func docs'): BfclFuncDoc[] {
  return parseLines(text, what).map((raw, i) => {
    if (!isRecord(raw) || typeof raw.name !== 'string') throw new Error(`${what}, line ${i + 1}: no string "name"`);
    return raw as BfclFuncDoc;
  });
}

/** An entry with its ground truth. */
export interface BfclPair {
  entry: BfclEntry;
  answer: BfclAnswer;
  category: string;
}

/**
 * Pairs entries with their answers by id and checks they line up: same id set, one
 * ground-truth turn per question turn. Throws naming the first mismatch.
 */
export function pairBfcl(entries: readonly BfclEntry[], answers: readonly BfclAnswer[]): BfclPair[] {
  const byId = new Map(answers.map((a) => [a.id, a]));
  if (byId.size !== answers.length) throw new Error('possible answers: an id appears twice');
  const pairs = entries.map((entry) => {
    const answer = byId.get(entry.id);
    if (!answer) throw new Error(`entry ${entry.id} has no possible answer`);
    if (answer.ground_truth.length !== entry.question.length)
      throw new Error(
        `entry ${entry.id}: ${entry.question.length} turns but ${answer.ground_truth.length} ground-truth turns`,
      );
    return { entry, answer, category: bfclCategoryOf(entry.id) };
  });
  if (pairs.length !== answers.length)
    throw new Error(`${answers.length} possible answers for ${entries.length} entries`);
  return pairs;
}

/** What the model is shown for one entry: the docs at turn 0, and the docs handed back at later turns. */
export interface BfclEntryTools {
  initial: BfclFuncDoc[];
  /** Turn index → docs added at that turn (miss_func). */
  holdout: Map<number, BfclFuncDoc[]>;
}

/**
 * The function docs of an entry (see the file header). `docsByClass` holds every involved
 * class's docs; throws naming a class without docs or a held-out name no doc has.
 */
export function buildEntryTools(
  entry: BfclEntry,
  docsByClass: ReadonlyMap<string, readonly BfclFuncDoc[]>,
): BfclEntryTools {
  const all: BfclFuncDoc[] = [];
  for (const cls of entry.involved_classes) {
    const docs = docsByClass.get(cls);
    if (!docs) throw new Error(`entry ${entry.id}: no function docs for class ${cls} (${funcDocFileOf(cls)})`);
    all.push(...docs);
  }
  const holdout = new Map<number, BfclFuncDoc[]>();
  for (const [turn, names] of Object.entries(entry.missed_function ?? {})) {
    const held: BfclFuncDoc[] = [];
    for (const name of names) {
      const i = all.findIndex((d) => d.name === name);
      if (i < 0) throw new Error(`entry ${entry.id}: missed function ${name} has no doc`);
      held.push(all[i]);
      all.splice(i, 1);
    }
    holdout.set(Number(turn), held);
  }
  return { initial: all, holdout };
}
