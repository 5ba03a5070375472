import { describe, expect, it } from 'vitest';
import { formatPath, parseTask, TaskValidationError, validateTask } from './taskSchema';
import type { Task } from './types';

/** A small valid task written by hand: three tools, the third with a required city. */
function makeTask(): Task {
  const impl = { language: 'javascript' as const, source: '(args) => args' };
  return {
    id: 't1',
    question: 'What is the capital of Velmora?',
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_capital',
          description: 'Capital city of a country.',
          parameters: { type: 'object', properties: { country: { type: 'string' } }, required: ['country'] },
        },
      },
      {
        type: 'function',
        function: {
          name: 'get_population',
          description: 'Population of a city.',
          parameters: {
            type: 'object',
            properties: {
              city: { type: 'string' },
              unit: { type: 'string', enum: ['people', 'thousands'], default: 'people' },
            },
            required: ['city'],
          },
        },
      },
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a place.',
          parameters: { type: 'object', properties: { place: { type: 'string' } }, required: ['place'] },
        },
      },
    ],
    implementations: { get_capital: impl, get_population: impl, get_weather: impl },
    unsolvedSet: { get_capital: ['Tolton'] },
    answer: 'Tolton',
    category: 'single_hop',
    goldCalls: [{ name: 'get_capital', arguments: { country: 'Velmora' } }],
  };
}

function issuesOf(x: unknown): string[] {
  const r = validateTask(x);
  return r.ok ? [] : r.issues.map((i) => `${i.path}: ${i.message}`);
}

describe('validateTask', () => {
  it('accepts a valid task and returns it', () => {
    const r = validateTask(makeTask());
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.task).toEqual(makeTask());
  });

  it('names a required argument that is not a property', () => {
    const t = makeTask();
    t.tools[2].function.parameters.required = ['city'];
    expect(issuesOf(t)).toEqual(['tools[2].function.parameters.required[0]: "city" is not a property']);
  });

  it('checks that tools, implementations, unsolvedSet and goldCalls agree', () => {
    const t = makeTask();
    delete (t.implementations as Record<string, unknown>).get_weather;
    t.implementations.get_wether = { language: 'javascript', source: '(a) => 1' };
    t.unsolvedSet.get_capitol = ['x'];
    t.goldCalls!.push({ name: 'search', arguments: {} });
    t.tools.push(structuredClone(t.tools[0]));
    expect(issuesOf(t)).toEqual([
      'tools[3].function.name: duplicate tool name "get_capital"',
      'implementations: no implementation for tool "get_weather"',
      'implementations.get_wether: "get_wether" is not a tool name',
      'unsolvedSet.get_capitol: "get_capitol" is not a tool name',
      'goldCalls[1].name: "search" is not a tool name',
    ]);
  });

  it('reports a default outside its enum and a trace of another task', () => {
    const t = makeTask();
    t.tools[1].function.parameters.properties.unit.default = 'millions';
    t.expertTrace = { taskId: 'other', turns: [], source: 'teacher', verified: true };
    expect(issuesOf(t)).toEqual([
      'tools[1].function.parameters.properties.unit.default: "millions" is not in the enum',
      'expertTrace.taskId: "other" is not this task\'s id "t1"',
    ]);
  });

  it('reports shape errors with their exact paths', () => {
    const t = makeTask() as unknown as Record<string, unknown>;
    const tools = t.tools as Record<string, unknown>[];
    (tools[1].function as Record<string, unknown>).extra = 1;
    (
      (tools[0].function as { parameters: { properties: Record<string, unknown> } }).parameters.properties
        .country as Record<string, unknown>
    ).type = 'text';
    t.category = 'two_hop';
    delete t.answer;
    (t.implementations as Record<string, unknown>).get_capital = { language: 'ruby', source: 'x' };
    const paths = issuesOf(t).map((line) => line.split(': ')[0]);
    expect(paths.sort()).toEqual(
      [
        'answer',
        'category',
        'implementations.get_capital.language',
        'tools[0].function.parameters.properties.country.type',
        'tools[1].function.extra',
      ].sort(),
    );
    expect(issuesOf(t)).toContain('tools[1].function.extra: unknown field');
  });

  it('keeps extra JSON-schema keywords of a parameter (FTRL tools use them)', () => {
    const t = makeTask();
    (t.tools[0].function.parameters.properties.country as unknown as Record<string, unknown>).format = 'iso';
    const r = validateTask(t);
    expect(r.ok).toBe(true);
    if (r.ok)
      expect(
        (r.task.tools[0].function.parameters.properties.country as unknown as Record<string, unknown>).format,
      ).toBe('iso');
  });

  it('rejects non-objects and throws a listing error from parseTask', () => {
    expect(issuesOf(null)[0]).toMatch(/^: /);
    const t = makeTask();
    t.tools[2].function.parameters.required = ['city', 'place', 'day'];
    try {
      parseTask(t);
      throw new Error('parseTask accepted an invalid task');
    } catch (e) {
      expect(e).toBeInstanceOf(TaskValidationError);
      expect((e as Error).message).toBe(
        'invalid task "t1":\n' +
          '  tools[2].function.parameters.required[0]: "city" is not a property\n' +
          '  tools[2].function.parameters.required[2]: "day" is not a property',
      );
    }
  });

  it('formats paths with brackets for numbers and odd keys', () => {
    expect(formatPath(['tools', 2, 'function', 'parameters', 'required', 0])).toBe(
      'tools[2].function.parameters.required[0]',
    );
    expect(formatPath(['implementations', 'my tool', 'source'])).toBe('implementations["my tool"].source');
    expect(formatPath([])).toBe('');
  });
});
