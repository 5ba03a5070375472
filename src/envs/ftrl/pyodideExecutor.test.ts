/**
 * FTRL observation formatting and time limits, in a real Pyodide worker (loaded once for
 * the file; a second load happens after the timeout test terminates the worker).
 * Expected strings are written by hand from CPython's rules: json.dumps with
 * ensure_ascii=False and the default ', ' / ': ' separators, str() otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../types';
import { callTaskTool, type PyodideExecutor } from './pyodideExecutor';
import { createNodePyodideExecutor } from './pyodideExecutorNode';

let executor: PyodideExecutor;

beforeAll(async () => {
  executor = createNodePyodideExecutor({ timeoutMs: 5_000 });
  const loadMs = await executor.ready();
  console.log(`[pyodideExecutor.test] Pyodide loaded in ${loadMs} ms`);
}, 120_000);

afterAll(() => executor?.close());

const returning = (expr: string) => `def tool(x=None):\n    return ${expr}\n`;

describe('FTRL observation format', () => {
  it('returns a str as is', async () => {
    const r = await executor.callTool(returning('\'Zoë said "hi"\\nbye\''), 'tool', {});
    expect(r).toMatchObject({ observation: 'Zoë said "hi"\nbye', isError: false, isTimeout: false });
  });

  it('writes a dict as json.dumps(ensure_ascii=False): non-ASCII kept, ", " and ": " separators, key order kept', async () => {
    const r = await executor.callTool(
      returning("{'name': 'Albrecht Dürer', 'city': '東京', 'n': [1, 2.5, None, True], 'z': {}}"),
      'tool',
      {},
    );
    expect(r.observation).toBe('{"name": "Albrecht Dürer", "city": "東京", "n": [1, 2.5, null, true], "z": {}}');
    expect(r.isError).toBe(false);
  });

  it('writes a list as JSON', async () => {
    const r = await executor.callTool(returning("[1, 'é', {'a': None}, [False]]"), 'tool', {});
    expect(r.observation).toBe('[1, "é", {"a": null}, [false]]');
  });

  it('writes anything else with str(): int, float, None, bool, tuple', async () => {
    const cases: [string, string][] = [
      ['42', '42'],
      ['2.50', '2.5'],
      ['None', 'None'],
      ['True', 'True'],
      ["(1, 'a')", "(1, 'a')"],
    ];
    for (const [expr, expected] of cases) {
      const r = await executor.callTool(returning(expr), 'tool', {});
      expect(r.observation, expr).toBe(expected);
    }
  });

  it('passes arguments as keyword arguments; raw JSON text keeps a float a float', async () => {
    const code = 'def echo(a, b=0):\n    return repr(a) + "|" + repr(b)\n';
    expect((await executor.callTool(code, 'echo', { b: 'x', a: 1 })).observation).toBe("1|'x'");
    // JSON.stringify({a: 2.0}) is '{"a":2}', so Python gets an int; the raw text keeps 2.0.
    expect((await executor.callTool(code, 'echo', { a: 2.0 })).observation).toBe('2|0');
    expect((await executor.callTool(code, 'echo', '{"a": 2.0}')).observation).toBe('2.0|0');
  });

  it("turns an exception into FTRL's error string (spelling 'occured' kept)", async () => {
    const raising = 'def bad(x):\n    raise ValueError("no such city: " + x)\n';
    expect(await executor.callTool(raising, 'bad', { x: 'Oz' })).toMatchObject({
      observation: 'an error occured when call bad: no such city: Oz',
      isError: true,
    });
    const code = 'def f(x):\n    return x\n';
    expect((await executor.callTool(code, 'f', {})).observation).toBe(
      "an error occured when call f: f() missing 1 required positional argument: 'x'",
    );
    expect((await executor.callTool(code, 'f', { x: 1, y: 2 })).observation).toBe(
      "an error occured when call f: f() got an unexpected keyword argument 'y'",
    );
    expect((await executor.callTool(code, 'f', '[1]')).observation).toBe(
      'an error occured when call f: arguments must be a JSON object, got list',
    );
    expect((await executor.callTool(code, 'missing', {})).observation).toBe(
      "an error occured when call missing: name 'missing' is not defined",
    );
    // json.dumps itself failing is an exception too.
    expect((await executor.callTool(returning("{'s': {1, 2}}"), 'tool', {})).observation).toBe(
      'an error occured when call tool: Object of type set is not JSON serializable',
    );
  });

  it('keeps print output out of the observation, and runs each call in a fresh namespace', async () => {
    const code =
      'COUNT = [0]\nprint("module noise")\ndef count():\n    print("call noise")\n    COUNT[0] += 1\n    return COUNT[0]\n';
    expect((await executor.callTool(code, 'count', {})).observation).toBe('1');
    expect((await executor.callTool(code, 'count', {})).observation).toBe('1'); // no state carried over
    // Another task's tool is not visible: each source runs in its own namespace.
    expect((await executor.callTool('def g():\n    return count()\n', 'g', {})).observation).toBe(
      "an error occured when call g: name 'count' is not defined",
    );
  });

  it('answers an unknown tool of a task with the error string', async () => {
    const task = {
      id: 't1',
      implementations: { known: { language: 'python', source: 'def known():\n    return "ok"\n' } },
    } as unknown as Task;
    expect((await callTaskTool(executor, task, { name: 'known', arguments: {} })).observation).toBe('ok');
    expect((await callTaskTool(executor, task, { name: 'ghost', arguments: {} })).observation).toBe(
      'an error occured when call ghost: no tool named ghost in task t1',
    );
  });
});

describe('time limit', () => {
  it('stops a tool that loops forever with the error string, and the executor works afterwards', async () => {
    const spins = 'def spin(n):\n    while True:\n        n += 1\n';
    const before = executor.respawnCount;
    const r = await executor.callTool(spins, 'spin', { n: 0 }, { timeoutMs: 1_500 });
    expect(r).toMatchObject({
      observation: 'an error occured when call spin: timed out after 1500 ms',
      isError: true,
      isTimeout: true,
    });
    expect(r.elapsedMs).toBeGreaterThanOrEqual(1_500);
    expect(executor.respawnCount).toBe(before + 1);
    // A fresh worker (a new Pyodide) serves the next call.
    const after = await executor.callTool(returning("{'ok': 'sí'}"), 'tool', {});
    expect(after).toMatchObject({ observation: '{"ok": "sí"}', isError: false, isTimeout: false });
  }, 120_000);
});
