/**
 * Test helper (tests only): FTRL-format lines written for the tests (not benchmark data).
 * Each has one Python tool whose output only Python's own evaluation produces (a sorted join,
 * an f-string with a format spec), the expected sub-answer in unsolved_set and the answer.
 * `capitalCodeLine` adds hand-written decoy tools, so its prompt is as long as FTRL's
 * (past qwen3-nano's window). The module loads no model code until `writeRandomFtrlFixture`
 * runs, so the Playwright specs can import the lines.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FTRL_INSTRUCTION } from '../envs/ftrl/importFtrl';

interface ToolSpec {
  name: string;
  param: string;
  description: string;
  code: string;
}

function toolSchema(t: ToolSpec) {
  return {
    type: 'function',
    function: {
      name: t.name,
      description: t.description,
      parameters: {
        type: 'object',
        properties: { [t.param]: { type: 'string', description: `The ${t.param}.` } },
        required: [t.param],
      },
    },
  };
}

function line(options: {
  question: string;
  tool: string;
  param: string;
  description: string;
  code: string;
  expected: string;
  category: string;
  goldArgs?: Record<string, unknown>;
  /** Tools listed after the task's own (decoys: never needed by the question). */
  extraTools?: readonly ToolSpec[];
}): string {
  const own: ToolSpec = {
    name: options.tool,
    param: options.param,
    description: options.description,
    code: options.code,
  };
  const all = [own, ...(options.extraTools ?? [])];
  const tools = all.map(toolSchema);
  const messages: unknown[] = [{ role: 'user', content: `${FTRL_INSTRUCTION}\nQuestion: ${options.question}` }];
  if (options.goldArgs)
    messages.push({
      role: 'assistant',
      content: '',
      tool_calls: [{ type: 'function', function: { name: options.tool, arguments: JSON.stringify(options.goldArgs) } }],
    });
  return JSON.stringify({
    messages,
    tools: JSON.stringify(tools),
    codes: JSON.stringify(Object.fromEntries(all.map((t) => [t.name, t.code]))),
    unsolved_set: JSON.stringify({ [options.tool]: [options.expected] }),
    answer: options.expected,
    data_source: `self/${options.category}`,
  });
}

/** The capital of a code: `country_capital(code="FR")` answers `Paris (of BE, DE, FR)`. */
export const CAPITAL_CODE = `def country_capital(code):
    table = {'FR': 'Paris', 'DE': 'Berlin', 'BE': 'Brussels'}
    if code not in table:
        raise ValueError(f'unknown code {code!r}')
    return f"{table[code]} (of {', '.join(sorted(table))})"
`;

/** `river_length(name="Nile")` answers `6,650 km`. */
export const RIVER_CODE = `def river_length(name):
    lengths = {'Nile': 6650, 'Amazon': 6400}
    return f"{lengths[name]:,} km"
`;

export function capitalLine(options: { goldArgs?: Record<string, unknown> } = {}): string {
  return line({
    question: 'Which city is the capital of the country with the code FR?',
    tool: 'country_capital',
    param: 'code',
    description: 'The capital city of a country, by its two-letter code.',
    code: CAPITAL_CODE,
    expected: 'Paris',
    category: 'single_hop',
    ...options,
  });
}

export function riverLine(options: { goldArgs?: Record<string, unknown> } = {}): string {
  return line({
    question: 'How long is the Nile in kilometres?',
    tool: 'river_length',
    param: 'name',
    description: 'The length of a river in kilometres.',
    code: RIVER_CODE,
    expected: '6,650',
    category: 'single_hop',
    ...options,
  });
}

/** Two hand-written FTRL lines: line 1 the capital task, line 2 the river task. */
export const HAND_WRITTEN_FTRL = `${capitalLine()}\n${riverLine()}\n`;

const DECOY_KINDS = [
  {
    kind: 'metres_to_feet',
    param: 'metres',
    description: 'Converts a length in metres to feet, rounded to two decimals, for building plans.',
    body: 'return f"{float(metres) * 3.28084:.2f}"',
  },
  {
    kind: 'celsius_to_kelvin',
    param: 'celsius',
    description: 'Converts a temperature in degrees Celsius to kelvin, as laboratory logs record it.',
    body: 'return f"{float(celsius) + 273.15:.2f}"',
  },
  {
    kind: 'word_count',
    param: 'text',
    description: 'Counts the words of a text, splitting on runs of whitespace, as an editor would.',
    body: 'return str(len(str(text).split()))',
  },
  {
    kind: 'reverse_words',
    param: 'text',
    description: 'Returns the words of a text in reverse order, joined by single spaces.',
    body: "return ' '.join(reversed(str(text).split()))",
  },
  {
    kind: 'vowel_count',
    param: 'text',
    description: 'Counts the vowels (a, e, i, o, u) of a text, upper or lower case alike.',
    body: "return str(sum(c in 'aeiouAEIOU' for c in str(text)))",
  },
  {
    kind: 'title_case',
    param: 'text',
    description: 'Writes every word of a text with a capital first letter, the rest lower case.',
    body: 'return str(text).title()',
  },
] as const;

/**
 * `n` hand-written decoy tools (six kinds, numbered): each a small Python function that does
 * what its sentence of description says, none of them about capitals.
 */
export function listDecoyTools(n: number): ToolSpec[] {
  return Array.from({ length: n }, (_, i) => {
    const { kind, param, description, body } = DECOY_KINDS[i % DECOY_KINDS.length];
    const name = `${kind}_${Math.floor(i / DECOY_KINDS.length) + 1}`;
    return { name, param, description, code: `def ${name}(${param}):\n    ${body}\n` };
  });
}

/**
 * The capital task for one code of `country_capital`'s table (FR → Paris, DE → Berlin,
 * BE → Brussels), with `decoys` decoy tools after the task's own: one Python call
 * `country_capital(code=...)` answers it.
 */
export function capitalCodeLine(options: { code: 'FR' | 'DE' | 'BE'; decoys: number }): string {
  const capital = { FR: 'Paris', DE: 'Berlin', BE: 'Brussels' }[options.code];
  return line({
    question: `Which city is the capital of the country with the code ${options.code}?`,
    tool: 'country_capital',
    param: 'code',
    description: 'The capital city of a country, by its two-letter code.',
    code: CAPITAL_CODE,
    expected: capital,
    category: 'single_hop',
    extraTools: listDecoyTools(options.decoys),
  });
}

/** A temp folder with a random full-vocabulary Qwen3 folder (seed 5) and HAND_WRITTEN_FTRL as tasks.jsonl. */
export async function writeRandomFtrlFixture(
  prefix: string,
): Promise<{ dir: string; folder: string; tasksFile: string }> {
  const { loadQwen3TokenizerFromPackage } = await import('../model/tokenizer/nodeLoader');
  const { createRandomQwen3Tensors, createTrainerTestQwen3Config, writeQwen3Folder } =
    await import('../model/weights/testFolders');
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const folder = path.join(dir, 'qwen3-random');
  // Qwen3's vocabulary without the padding rows of Qwen/Qwen3-0.6B (151,936): a random model
  // samples those ids (no token behind them), which the tokenizer cannot decode.
  const config = createTrainerTestQwen3Config({ vocab_size: (await loadQwen3TokenizerFromPackage()).vocabSize });
  await writeQwen3Folder(folder, { config, tensors: await createRandomQwen3Tensors(config, 5) });
  const tasksFile = path.join(dir, 'tasks.jsonl');
  writeFileSync(tasksFile, HAND_WRITTEN_FTRL);
  return { dir, folder, tasksFile };
}
