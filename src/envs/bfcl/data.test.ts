/**
 * BFCL v4 multi-turn data: the parsers and the tool lists on small inline entries, the real
 * files when $PACT_DATA_DIR/bfcl (default ../shared/data/bfcl) is present, and, when
 * $PACT_BFCL_SRC names a copy of BFCL's source, a replay of the ground truth through the
 * real backends in Pyodide (every entry must then pass BFCL's rule).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodePyodideExecutor } from '../ftrl/pyodideExecutorNode';
import { checkBfclEntry } from './checker';
import {
  bfclCategoryOf,
  buildEntryTools,
  funcDocFileOf,
  pairBfcl,
  parseBfclAnswers,
  parseBfclEntries,
  type BfclFuncDoc,
} from './data';
import { readBfclBackendSources, readBfclFile, resolveBfclDataDir } from './nodeSource';
import { BfclBackends } from './pythonBackend';

const dataDir = resolveBfclDataDir();
const hasData = existsSync(path.join(dataDir, 'BFCL_v4_multi_turn_base.json'));
if (!hasData)
  console.warn(
    `[bfcl data.test] BFCL data not found at ${dataDir}: the real-file checks are skipped (set PACT_DATA_DIR)`,
  );
const bfclSrc = process.env.PACT_BFCL_SRC;
/** Extra pure-Python package folders (comma-separated), e.g. …/site-packages/mpmath for MathAPI. */
const pyPackages = (process.env.PACT_BFCL_PY_PACKAGES ?? '').split(',').filter((p) => p !== '');

const doc = (name: string): BfclFuncDoc => ({ name, description: name, parameters: { type: 'dict', properties: {} } });

describe('BFCL data parsing', () => {
  it('parses entries and answers, pairs them, and names the mismatches', () => {
    const entries = parseBfclEntries(
      [
        JSON.stringify({
          id: 'multi_turn_x_0',
          question: [[{ role: 'user', content: 'a' }], []],
          initial_config: { A: { n: 1.0 } },
          involved_classes: ['A'],
          missed_function: { '1': ['g'] },
        }),
        '',
      ].join('\n'),
    );
    expect(entries[0]).toMatchObject({
      id: 'multi_turn_x_0',
      involved_classes: ['A'],
      missed_function: { '1': ['g'] },
    });
    expect(entries[0].rawJson).toContain('"n":1');
    const answers = parseBfclAnswers(JSON.stringify({ id: 'multi_turn_x_0', ground_truth: [['f()'], ['g(a=1)']] }));
    expect(pairBfcl(entries, answers)[0].category).toBe('multi_turn_x');
    expect(() =>
      pairBfcl(entries, parseBfclAnswers(JSON.stringify({ id: 'multi_turn_x_0', ground_truth: [['f()']] }))),
    ).toThrow('entry multi_turn_x_0: 2 turns but 1 ground-truth turns');
    expect(() => pairBfcl(entries, [])).toThrow('entry multi_turn_x_0 has no possible answer');
    expect(() => parseBfclEntries('{"id": "e", "question": "q", "involved_classes": ["A"]}')).toThrow(
      '"question" must be a list',
    );
    expect(() => parseBfclEntries('{"id": "e"')).toThrow('entries, line 1: not JSON');
  });

  it('holds out the missed functions until their turn', () => {
    const [entry] = parseBfclEntries(
      JSON.stringify({
        id: 'multi_turn_miss_func_3',
        question: [[{ role: 'user', content: 'a' }], []],
        initial_config: {},
        involved_classes: ['A', 'B'],
        missed_function: { '1': ['g'] },
      }),
    );
    const tools = buildEntryTools(
      entry,
      new Map([
        ['A', [doc('f'), doc('g')]],
        ['B', [doc('h')]],
      ]),
    );
    expect(tools.initial.map((d) => d.name)).toEqual(['f', 'h']);
    expect([...tools.holdout.entries()].map(([t, ds]) => [t, ds.map((d) => d.name)])).toEqual([[1, ['g']]]);
    expect(() => buildEntryTools(entry, new Map([['A', [doc('f')]]]))).toThrow('no function docs for class B');
  });

  it('names doc files and categories as BFCL does', () => {
    expect(funcDocFileOf('TwitterAPI')).toBe('posting_api.json');
    expect(funcDocFileOf('SimpleCounterAPI')).toBe('simple_counter_api.json');
    expect(bfclCategoryOf('multi_turn_long_context_12')).toBe('multi_turn_long_context');
  });
});

describe.skipIf(!hasData)('the real BFCL v4 multi-turn files', () => {
  // [file, entries, turns, empty ground-truth turns, entries with missed functions]
  const expected: [string, number, number, number, number][] = [
    ['base', 200, 734, 3, 0],
    ['miss_func', 200, 934, 203, 200],
    ['miss_param', 200, 934, 203, 0],
    ['long_context', 200, 734, 3, 0],
  ];
  it.each(expected)(
    'multi_turn_%s: %i entries, %i turns, %i empty ground-truth turns, %i with held-out functions',
    (name, n, turns, empty, missed) => {
      const data = readBfclFile(path.join(dataDir, `BFCL_v4_multi_turn_${name}.json`));
      expect(data.pairs).toHaveLength(n);
      expect(new Set(data.pairs.map((p) => p.category))).toEqual(new Set([`multi_turn_${name}`]));
      expect(data.pairs.reduce((s, p) => s + p.entry.question.length, 0)).toBe(turns);
      expect(data.pairs.reduce((s, p) => s + p.answer.ground_truth.filter((t) => t.length === 0).length, 0)).toBe(
        empty,
      );
      expect(data.pairs.filter((p) => p.entry.missed_function).length).toBe(missed);
      expect([...data.docsByClass.keys()].sort()).toEqual([
        'GorillaFileSystem',
        'MathAPI',
        'MessageAPI',
        'TicketAPI',
        'TradingBot',
        'TravelAPI',
        'TwitterAPI',
        'VehicleControlAPI',
      ]);
      for (const { entry } of data.pairs) {
        const tools = buildEntryTools(entry, data.docsByClass);
        // A holdout turn has no user message of its own (BFCL asserts it).
        for (const t of tools.holdout.keys()) expect(entry.question[t]).toEqual([]);
        expect(tools.initial.length).toBeGreaterThan(0);
      }
    },
  );
});

describe.skipIf(!hasData || !bfclSrc)("the ground truth replayed through BFCL's own backends ($PACT_BFCL_SRC)", () => {
  const executor = createNodePyodideExecutor({ timeoutMs: 30_000 });
  afterAll(() => executor.close());
  const n = Number(process.env.PACT_BFCL_REPLAY_N ?? 20);
  it.each(['base', 'miss_func', 'miss_param', 'long_context'])(
    `multi_turn_%s: the first ${n} entries whose classes load pass`,
    async (name) => {
      const backends = new BfclBackends(executor, readBfclBackendSources(bfclSrc!, pyPackages));
      const problems = await backends.load();
      console.log(
        `[bfcl data.test] classes that do not load: ${JSON.stringify(Object.fromEntries(Object.entries(problems).filter(([, p]) => p !== null)))}`,
      );
      const data = readBfclFile(path.join(dataDir, `BFCL_v4_multi_turn_${name}.json`));
      const loadable = data.pairs.filter((p) => p.entry.involved_classes.every((c) => problems[c] === null));
      const pairs = loadable.slice(0, n);
      expect(pairs.length).toBe(Math.min(n, loadable.length));
      const failed: unknown[] = [];
      for (const { entry, answer } of pairs) {
        const turns = answer.ground_truth.map((t) => (t.length === 0 ? [] : [t.map((text) => ({ text }))]));
        const r = await checkBfclEntry(backends, entry, answer.ground_truth, turns);
        if (!r.valid) failed.push({ id: entry.id, ...r });
      }
      expect(failed).toEqual([]);
    },
    600_000,
  );
});
