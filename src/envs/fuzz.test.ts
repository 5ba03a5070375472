/**
 * Fuzz tests: thousands of random and adversarial strings through the
 * parser, the rollout step and the worker executor. Nothing may throw, and nothing may
 * hang: the parser is linear by construction (each tag is searched for once per
 * position), and every tool call has a time limit, so there is no timing assertion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng, type Rng } from '../core/rng';
import { TOKEN_KINDS } from '../core/types';
import { generateTasks } from './generator';
import { RolloutEnv, tagSegments, type RenderChat } from './rollout';
import { createWorkerExecutor, InProcessExecutor, type WorkerExecutor } from './sandbox';
import { parseAssistantTurn, type ParsedTurn } from './toolCallParser';

const FRAGMENTS = [
  '<think>',
  '</think>',
  '<tool_call>',
  '</tool_call>',
  '<answer>',
  '</answer>',
  '<|im_end|>',
  '<|im_start|>',
  '<tool_response>',
  '<tool_call',
  'tool_call>',
  '<',
  '>',
  '/',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  '"',
  '\\',
  '\n',
  ' ',
  '\t',
  '"name"',
  '"arguments"',
  '"get_capital"',
  '{"country": "Velmora"}',
  '"__proto__"',
  '"constructor"',
  '"prototype"',
  '1e999',
  '-1e999',
  '123456789012345678901234567890',
  '-0',
  'NaN',
  'null',
  'true',
  '0.1',
  'é',
  '😀',
  '\u0000',
  '\uD800',
  '\uDFFF',
  '\u202E',
  'ß',
  '中文',
  '\r\n',
];

function randomText(rng: Rng, maxPieces: number): string {
  const n = rng.int(maxPieces + 1);
  let s = '';
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    if (r < 0.75) s += FRAGMENTS[rng.int(FRAGMENTS.length)];
    else if (r < 0.95) s += String.fromCharCode(32 + rng.int(95));
    else s += String.fromCharCode(rng.int(0x10000));
  }
  return s;
}

function randomCallText(rng: Rng): string {
  const values = [
    '"Velmora"',
    '1',
    '1e999',
    'null',
    '[]',
    '{}',
    '{"__proto__": {"x": 1}}',
    '"' + 'a'.repeat(rng.int(50)) + '"',
    'true',
    '[1, "2", [3]]',
  ];
  const keys = ['country', 'city', 'person', 'unit', 'numbers', 'operation', '__proto__', 'constructor', ''];
  const names = ['get_capital', 'get_population', 'calculator', 'date_difference', 'nope', '', '__proto__'];
  const args = Array.from(
    { length: rng.int(4) },
    () => `"${keys[rng.int(keys.length)]}": ${values[rng.int(values.length)]}`,
  ).join(', ');
  return `<tool_call>\n{"name": "${names[rng.int(names.length)]}", "arguments": {${args}}}\n</tool_call>`;
}

const ADVERSARIAL: string[] = [
  '['.repeat(100_000),
  '<tool_call>' + '['.repeat(100_000) + '</tool_call>',
  '<tool_call>{"name": "f", "arguments": ' + '{"a": '.repeat(50_000) + '1' + '}'.repeat(50_000) + '}</tool_call>',
  '<tool_call>'.repeat(50_000),
  '<think>'.repeat(50_000),
  '</think>'.repeat(50_000),
  '<answer>'.repeat(50_000),
  '<tool_call></tool_call>'.repeat(20_000),
  '<tool_call>{"name": "f", "arguments": {"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}}}</tool_call>',
  '<tool_call>{"name": "f", "arguments": {"n": 1e999999, "m": -1e999999}}</tool_call>',
  '<tool_call>{"name": "f", "arguments": {' +
    Array.from({ length: 10_000 }, (_, i) => `"k${i}": ${i}`).join(', ') +
    '}}</tool_call>',
  '\uD800<tool_call>\uDFFF</tool_call>\uD800',
  'x'.repeat(1_000_000),
];

/** Throws (naming the problem) unless the pieces cover `text` exactly and each call has a call xor an error. */
function checkInvariants(text: string, p: ParsedTurn): void {
  const where = `text ${JSON.stringify(text.slice(0, 80))}`;
  let at = 0;
  for (const piece of p.pieces) {
    if (piece.start !== at || piece.end <= piece.start)
      throw new Error(`${where}: piece ${JSON.stringify(piece)} does not start at ${at}`);
    if (!TOKEN_KINDS.includes(piece.kind)) throw new Error(`${where}: bad kind ${piece.kind}`);
    at = piece.end;
  }
  if (at !== text.length) throw new Error(`${where}: pieces end at ${at}, text at ${text.length}`);
  for (const c of p.calls)
    if ((c.call === undefined) === (c.error === undefined))
      throw new Error(`${where}: call #${c.index} has both or neither call and error`);
  for (const e of p.errors) if (typeof e !== 'string') throw new Error(`${where}: an error is not a string`);
}

const plainRender: RenderChat = (messages, options) =>
  messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') +
  (options.addGenerationPrompt ? '<|im_start|>assistant\n' : '');

describe('parser fuzz', () => {
  it('parses 5,000 random strings without throwing, covering each text exactly', () => {
    const rng = createRng('fuzz/parser');
    for (let i = 0; i < 5_000; i++) {
      const text = i % 3 === 0 ? randomText(rng, 12) + randomCallText(rng) + randomText(rng, 6) : randomText(rng, 40);
      checkInvariants(text, parseAssistantTurn(text));
    }
  });

  it('parses adversarial strings (deep nesting, tag floods, huge numbers, prototype keys)', () => {
    for (const text of ADVERSARIAL) checkInvariants(text, parseAssistantTurn(text));
    const proto = parseAssistantTurn(ADVERSARIAL[8]).calls[0].call!;
    expect(Object.keys(proto.arguments)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('rollout and executor fuzz', () => {
  let worker: WorkerExecutor;
  beforeAll(async () => {
    worker = await createWorkerExecutor();
  });
  afterAll(() => worker.dispose());

  it('steps 1,500 random turns through the environment without throwing', async () => {
    const rng = createRng('fuzz/rollout');
    const tasks = generateTasks({ seed: 77, n: 20 });
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: plainRender, maxTurns: 4 });
    let steps = 0;
    for (let episode = 0; steps < 1_500; episode++) {
      env.reset(tasks[episode % tasks.length]);
      let done = false;
      while (!done) {
        const text =
          rng.next() < 0.5 ? randomText(rng, 10) + randomCallText(rng) + randomCallText(rng) : randomText(rng, 30);
        const s = await env.step(text);
        steps++;
        done = s.done;
        // Every <tool_call> block gets exactly one observation.
        expect(s.turn.observations.length).toBeGreaterThanOrEqual(s.turn.parsed.calls.length);
      }
      expect(
        tagSegments(env.transcript)
          .map((x) => x.text)
          .join(''),
      ).toBe(env.contextText());
    }
  });

  it('runs 300 random and adversarial calls in the worker: every one answers with {ok, output}', async () => {
    const rng = createRng('fuzz/executor');
    const task = generateTasks({ seed: 78, n: 4, categories: ['parallel_multi_hop'], distractors: 6 })[0];
    const impls = Object.entries(task.implementations);
    const weird: unknown[] = [
      'x'.repeat(100_000),
      -0,
      1e308,
      Number.MAX_SAFE_INTEGER + 2,
      '😀\uD800',
      null,
      [],
      {},
      [[[[[[]]]]]],
      true,
      JSON.parse('{"__proto__": {"polluted": 1}}'),
      { constructor: { prototype: 1 } },
      Array.from({ length: 1000 }, (_, i) => i),
    ];
    for (let i = 0; i < 280; i++) {
      const [name, impl] = impls[rng.int(impls.length)];
      const args: Record<string, unknown> = {};
      for (const key of [
        'person',
        'city',
        'country',
        'organization',
        'unit',
        'numbers',
        'operation',
        'value',
        'start_date',
      ]) {
        if (rng.next() < 0.4) args[key] = weird[rng.int(weird.length)];
      }
      const r = await worker.execute(impl, name, args, { timeoutMs: 2000 });
      expect(typeof r.ok).toBe('boolean');
      expect(typeof r.output).toBe('string');
    }
    const hostile = [
      'syntax error here (',
      '(a) => { throw null }',
      '(a) => { throw { get message() { throw new Error("x") } } }',
      '(a) => Symbol("s")',
      '(a) => 10n ** 30n',
      '(a) => { let o = {}; for (let i = 0; i < 10000; i++) o = { o }; return o; }',
      '(a) => new Proxy({}, { ownKeys() { throw new Error("trap") } })',
      '(a) => ({ get boom() { throw new Error("getter") } })',
      '(a) => "y".repeat(10_000_000)',
      '(a) => Promise.reject(new Error("rejected"))',
      '(a) => new Promise(() => {})',
      '(a) => { while (true) {} }',
      '(a) => { const xs = []; for (;;) xs.push(new Array(1e6).fill(0)); }',
      '(a) => { JSON.stringify = null; return { still: "formatted?" }; }',
      '(a) => ({ after: "the hostile ones" })',
    ];
    const outputs: string[] = [];
    for (const source of hostile) {
      const r = await worker.execute({ language: 'javascript', source }, 'hostile', {}, { timeoutMs: 300 });
      expect(typeof r.output).toBe('string');
      outputs.push(r.output);
    }
    expect(outputs[10]).toBe(
      'an error occured when call hostile: the tool returned a promise that never settles (tool code has no timers or I/O)',
    );
    expect(outputs[11]).toBe('an error occured when call hostile: timed out after 300 ms');
  });
});
