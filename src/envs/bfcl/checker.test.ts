/**
 * BFCL's multi-turn rule on the fixture backend (fixtures/: SimpleCounterAPI, three
 * entries), with hand-written model calls run in the Node Pyodide sandbox.
 */
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodePyodideExecutor } from '../ftrl/pyodideExecutorNode';
import type { PyodideExecutor } from '../ftrl/pyodideExecutor';
import { checkBfclEntry, missingUnordered, type BfclModelTurns } from './checker';
import { readBfclBackendSources, readBfclFile, type BfclFileData } from './nodeSource';
import { BfclBackends, type BfclModelCall } from './pythonBackend';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE_SRC = path.join(here, 'fixtures', 'bfcl_src');
const FIXTURE_ENTRIES = path.join(here, 'fixtures', 'data', 'handmade_multi_turn_simple.json');

/** A model call as the policy would write it. */
function call(name: string, args: Record<string, unknown> | string): BfclModelCall {
  const argsText = typeof args === 'string' ? args : JSON.stringify(args);
  return { name, callJson: `{"name": ${JSON.stringify(name)}, "arguments": ${argsText}}` };
}

describe('BFCL multi-turn checker on the fixture backend', () => {
  let executor: PyodideExecutor;
  let backends: BfclBackends;
  let data: BfclFileData;
  const check = (id: string, turns: BfclModelTurns) => {
    const pair = data.pairs.find((p) => p.entry.id === id)!;
    return checkBfclEntry(backends, pair.entry, pair.answer.ground_truth, turns);
  };

  beforeAll(async () => {
    executor = createNodePyodideExecutor({ timeoutMs: 20_000 });
    data = readBfclFile(FIXTURE_ENTRIES);
    backends = new BfclBackends(executor, readBfclBackendSources(FIXTURE_SRC));
    expect(await backends.load()).toEqual({ SimpleCounterAPI: null });
  }, 120_000);
  afterAll(() => executor?.close());

  it('reads the fixture: 3 entries, their ground truth and the class docs', () => {
    expect(data.pairs.map((p) => [p.entry.id, p.category, p.answer.ground_truth.length])).toEqual([
      ['multi_turn_simple_0', 'multi_turn_simple', 2],
      ['multi_turn_simple_1', 'multi_turn_simple', 2],
      ['multi_turn_simple_2', 'multi_turn_simple', 3],
    ]);
    expect(data.docsByClass.get('SimpleCounterAPI')!.map((d) => d.name)).toEqual([
      'get_value',
      'increment',
      'list_counters',
      'reset',
    ]);
  });

  it('executes calls as BFCL does: dicts as json.dumps, errors as "Error during execution: …"', async () => {
    const entry = data.pairs[0].entry;
    await backends.open('t', entry.involved_classes, entry.rawJson!, false);
    const out = await backends.execute('t', [
      { text: "increment(name='a', by=2)" },
      call('get_value', { name: 'a' }),
      call('get_value', { name: 'nope' }),
      call('increment', { name: 'a', by: 'x' }),
      call('no_such_method', {}),
      call('increment', '{"name": "b", "by": 2.0}'),
      call('get_value', { who: 'a' }),
    ]);
    await backends.close('t');
    expect(out.decoded[0]).toBe("increment(name='a', by=2)");
    expect(out.decoded[1]).toBe("get_value(name='a')");
    expect(out.decoded[5]).toBe("increment(name='b',by=2.0)");
    expect(out.results).toEqual([
      '{"new_value": 3}',
      '{"value": 3}',
      '{"error": "No counter named nope."}',
      "Error during execution: unsupported operand type(s) for +=: 'int' and 'str'",
      "Error during execution: name 'no_such_method' is not defined",
      '{"new_value": 7.0}',
      "Error during execution: SimpleCounterAPI.get_value() got an unexpected keyword argument 'who'",
    ]);
  });

  it("refuses BFCL's forbidden names and names that are not identifiers", async () => {
    const entry = data.pairs[0].entry;
    await backends.open('t2', entry.involved_classes, entry.rawJson!, false);
    const out = await backends.execute('t2', [call('exit', {}), call('os.system', { c: 'ls' })]);
    await backends.close('t2');
    expect(out.results).toEqual([
      'Error during execution: Function call exit is not allowed.',
      'Error during execution: the function or an argument name is not a Python identifier',
    ]);
  });

  it('the right calls pass; a response from an earlier turn counts for a later one', async () => {
    expect(
      await check('multi_turn_simple_0', [
        [[call('increment', { name: 'a', by: 2 })]],
        [[call('get_value', { name: 'b' })]],
      ]),
    ).toEqual({ valid: true });
    // Turn 1's ground-truth result {"value": 5} was already returned in turn 0.
    expect(
      await check('multi_turn_simple_0', [
        [[call('get_value', { name: 'b' })], [call('increment', { name: 'a', by: 2 })]],
        [[call('list_counters', {})]],
      ]),
    ).toEqual({ valid: true });
  });

  it('a wrong argument fails the state check at its turn', async () => {
    const r = await check('multi_turn_simple_0', [
      [[call('increment', { name: 'a', by: 3 })]],
      [[call('get_value', { name: 'b' })]],
    ]);
    expect(r).toMatchObject({ valid: false, errorType: 'multi_turn:instance_state_mismatch', turn: 0 });
    expect(r.differences).toEqual([
      {
        className: 'SimpleCounterAPI',
        attribute: 'counters',
        model: "{'a': 4, 'b': 5}",
        groundTruth: "{'a': 3, 'b': 5}",
      },
    ]);
  });

  it('the right state without a call whose response the ground truth returns fails the response check', async () => {
    const r = await check('multi_turn_simple_1', [
      [[call('increment', { name: 'x', by: 3 })]],
      [[call('reset', { name: 'x' })]],
    ]);
    expect(r).toMatchObject({
      valid: false,
      errorType: 'multi_turn:execution_response_mismatch',
      turn: 0,
      missing: ['{"value": 3}'],
    });
    // A float argument: same state (3.0 == 3) but both responses read 3.0, so neither matches, as in BFCL.
    const f = await check('multi_turn_simple_1', [
      [[call('increment', '{"name": "x", "by": 3.0}'), call('get_value', { name: 'x' })]],
      [[call('reset', { name: 'x' })]],
    ]);
    expect(f).toMatchObject({
      valid: false,
      errorType: 'multi_turn:execution_response_mismatch',
      missing: ['{"new_value": 3}', '{"value": 3}'],
    });
  });

  it('a turn with ground-truth calls and no model call fails; an empty ground-truth turn is not checked', async () => {
    expect(await check('multi_turn_simple_0', [[[call('increment', { name: 'a', by: 2 })]], [[]]])).toMatchObject({
      valid: false,
      errorType: 'multi_turn:empty_turn_model_response',
      turn: 1,
    });
    // Turn 1 (empty ground truth): a failed call changes nothing, so the entry passes…
    const list = [[call('list_counters', {})]];
    const last = [[call('increment', { name: 'c', by: 10 })]];
    expect(await check('multi_turn_simple_2', [list, [[call('increment', { name: 'zeta' })]], last])).toEqual({
      valid: true,
    });
    expect(await check('multi_turn_simple_2', [list, [], last])).toEqual({ valid: true });
    // …but a call that changes state there shows at the next checked turn.
    expect(await check('multi_turn_simple_2', [list, [[call('increment', { name: 'c' })]], last])).toMatchObject({
      valid: false,
      errorType: 'multi_turn:instance_state_mismatch',
      turn: 2,
    });
  });

  it('a result with fewer turns than the ground truth is force-terminated', async () => {
    expect(await check('multi_turn_simple_0', [[[call('increment', { name: 'a', by: 2 })]]])).toMatchObject({
      valid: false,
      errorType: 'multi_turn:force_terminated',
    });
  });

  it('missingUnordered counts duplicates, ignores order', () => {
    expect(missingUnordered(['a', 'b', 'a'], ['b', 'a', 'c'])).toEqual(['a']);
    expect(missingUnordered(['a', 'b'], ['b', 'a'])).toEqual([]);
  });

  it('reads the fixture source: the class is found by its definition', () => {
    const sources = readBfclBackendSources(FIXTURE_SRC);
    expect(sources.classModules).toEqual({
      SimpleCounterAPI: 'bfcl_eval.eval_checker.multi_turn_eval.func_source_code.simple_counter',
    });
    expect(sources.packages).toContain('bfcl_eval.eval_checker');
    expect(Object.keys(sources.modules).sort()).toEqual([
      'bfcl_eval.eval_checker.multi_turn_eval.func_source_code',
      'bfcl_eval.eval_checker.multi_turn_eval.func_source_code.simple_counter',
    ]);
    expect(
      readFileSync(path.join(FIXTURE_SRC, '..', 'data', 'multi_turn_func_doc', 'simple_counter_api.json'), 'utf8'),
    ).toContain('increment');
  });
});
