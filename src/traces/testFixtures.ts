/**
 * Hand-written tasks and a tiny in-process executor for the traces tests: four tasks,
 * one per FTRL category, over a five-fact world, so every expected value below can be
 * read off this file. Not used by the app.
 */
import type { ToolCall } from '../core/types';
import type { Task, ToolSchema } from '../envs/types';
import type { ToolCallRunner } from './teacher';

function defineTool(
  name: string,
  description: string,
  properties: ToolSchema['function']['parameters']['properties'],
  required: string[],
): ToolSchema {
  return { type: 'function', function: { name, description, parameters: { type: 'object', properties, required } } };
}

export const FIXTURE_TOOLS: ToolSchema[] = [
  defineTool(
    'get_capital',
    'Return the capital city of a country.',
    { country: { type: 'string', description: 'Country name' } },
    ['country'],
  ),
  defineTool(
    'get_birthplace',
    'Return the city where a person was born.',
    { person: { type: 'string', description: 'Full name' } },
    ['person'],
  ),
  defineTool(
    'get_population',
    'Return the population of a city.',
    {
      city: { type: 'string', description: 'City name' },
      year: { type: 'integer', description: 'Census year', default: 2020 },
    },
    ['city'],
  ),
  defineTool('get_birthdate', 'Return the birth date of a person.', { person: { type: 'string' } }, ['person']),
  defineTool('get_city_area', 'Return the area of a city in square kilometres.', { city: { type: 'string' } }, [
    'city',
  ]),
];

const CAPITALS: Record<string, string> = { Nordia: 'Varno', Sudia: 'Lisk' };
const BIRTHPLACES: Record<string, string> = { 'Ada Brel': 'Varno', 'Tom Vik': 'Lisk' };
const POPULATIONS: Record<string, number> = { Varno: 120500, Lisk: 98000 };

/** Executes fixture calls the way a strict executor does (argument names checked). */
export function createFixtureExecutor(
  overrides: Partial<Record<string, (args: Record<string, unknown>) => string>> = {},
): ToolCallRunner & { log: ToolCall[] } {
  const log: ToolCall[] = [];
  const execute = async (call: ToolCall): Promise<string> => {
    log.push(call);
    const schema = FIXTURE_TOOLS.find((t) => t.function.name === call.name);
    if (!schema) return `Error: unknown tool ${call.name}`;
    const properties = schema.function.parameters.properties;
    for (const key of Object.keys(call.arguments))
      if (!(key in properties)) return `Error: unexpected argument '${key}'`;
    for (const key of schema.function.parameters.required ?? [])
      if (!(key in call.arguments)) return `Error: missing required argument '${key}'`;
    const override = overrides[call.name];
    if (override) return override(call.arguments);
    const a = call.arguments;
    switch (call.name) {
      case 'get_capital':
        return CAPITALS[String(a.country)] ?? `Error: no country ${String(a.country)}`;
      case 'get_birthplace':
        return BIRTHPLACES[String(a.person)]
          ? JSON.stringify({ birthplace: BIRTHPLACES[String(a.person)] })
          : `Error: no person ${String(a.person)}`;
      case 'get_population':
        return String(a.city) in POPULATIONS
          ? JSON.stringify({ city: a.city, population: POPULATIONS[String(a.city)] })
          : `Error: no city ${String(a.city)}`;
      default:
        return 'Error: not implemented in the fixture';
    }
  };
  return Object.assign(execute, { log });
}

function defineTask(partial: Omit<Task, 'tools' | 'implementations'>): Task {
  return { tools: FIXTURE_TOOLS, implementations: {}, ...partial };
}

export const SINGLE_HOP_TASK = defineTask({
  id: 'fx-single',
  question: 'What is the capital of Nordia?',
  unsolvedSet: { get_capital: ['Varno'] },
  answer: 'Varno',
  category: 'single_hop',
  goldCalls: [{ name: 'get_capital', arguments: { country: 'Nordia' } }],
});

export const MULTI_HOP_TASK = defineTask({
  id: 'fx-multi',
  question: 'What is the population of the city where Ada Brel was born?',
  unsolvedSet: { get_birthplace: ['Varno'], get_population: ['120500'] },
  answer: '120500',
  category: 'multi_hop',
  goldCalls: [
    { name: 'get_birthplace', arguments: { person: 'Ada Brel' } },
    { name: 'get_population', arguments: { city: 'Varno' } },
  ],
});

export const PARALLEL_TASK = defineTask({
  id: 'fx-parallel',
  question: 'What are the capitals of Nordia and Sudia?',
  unsolvedSet: { get_capital: ['Varno', 'Lisk'] },
  answer: 'Varno, Lisk',
  category: 'parallel_single_hop',
  goldCalls: [
    { name: 'get_capital', arguments: { country: 'Nordia' } },
    { name: 'get_capital', arguments: { country: 'Sudia' } },
  ],
});

export const PARALLEL_MULTI_TASK = defineTask({
  id: 'fx-parallel-multi',
  question: 'What are the populations of the cities where Ada Brel and Tom Vik were born?',
  unsolvedSet: { get_birthplace: ['Varno', 'Lisk'], get_population: ['120500', '98000'] },
  answer: '120500, 98000',
  category: 'parallel_multi_hop',
  goldCalls: [
    { name: 'get_birthplace', arguments: { person: 'Ada Brel' } },
    { name: 'get_birthplace', arguments: { person: 'Tom Vik' } },
    { name: 'get_population', arguments: { city: 'Varno' } },
    { name: 'get_population', arguments: { city: 'Lisk' } },
  ],
});

export const FIXTURE_TASKS: Task[] = [SINGLE_HOP_TASK, MULTI_HOP_TASK, PARALLEL_TASK, PARALLEL_MULTI_TASK];
