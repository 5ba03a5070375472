/**
 * Test helper (tests only): FTRL-format lines written for the tests (not benchmark data).
 * Each has one Python tool whose output only Python's own evaluation produces (a sorted join,
 * an f-string with a format spec), the expected sub-answer in unsolved_set and the answer.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FTRL_INSTRUCTION } from '../envs/ftrl/importFtrl';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import { createRandomQwen3Tensors, createTrainerTestQwen3Config, writeQwen3Folder } from '../model/weights/testFolders';

function line(options: {
  question: string;
  tool: string;
  param: string;
  description: string;
  code: string;
  expected: string;
  category: string;
  goldArgs?: Record<string, unknown>;
}): string {
  const tools = [
    {
      type: 'function',
      function: {
        name: options.tool,
        description: options.description,
        parameters: {
          type: 'object',
          properties: { [options.param]: { type: 'string', description: `The ${options.param}.` } },
          required: [options.param],
        },
      },
    },
  ];
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
    codes: JSON.stringify({ [options.tool]: options.code }),
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

/** A temp folder with a random full-vocabulary Qwen3 folder (seed 5) and HAND_WRITTEN_FTRL as tasks.jsonl. */
export async function writeRandomFtrlFixture(
  prefix: string,
): Promise<{ dir: string; folder: string; tasksFile: string }> {
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
