// LanguageRoutingExecutor counts the Python calls it routes, as the FTRL evaluation reports
// them (calls, error observations, timeouts), with a stand-in for the Pyodide executor.
import { describe, expect, it } from 'vitest';
import { LanguageRoutingExecutor } from './languageExecutor';
import type { PythonToolResult } from './pyodideExecutor';

describe('LanguageRoutingExecutor.pythonCounts', () => {
  it('counts calls, errors and timeouts; a closed executor counts as an error', async () => {
    const answers: (PythonToolResult | Error)[] = [
      { observation: '42', isError: false, isTimeout: false, elapsedMs: 1 },
      {
        observation: 'an error occured when call f: timed out after 100 ms',
        isError: true,
        isTimeout: true,
        elapsedMs: 100,
      },
      {
        observation: "an error occured when call f: name 'x' is not defined",
        isError: true,
        isTimeout: false,
        elapsedMs: 1,
      },
      new Error('PyodideExecutor: the executor is closed'),
    ];
    const python = {
      callTool: async () => {
        const a = answers.shift()!;
        if (a instanceof Error) throw a;
        return a;
      },
      close: () => {},
    };
    const ex = new LanguageRoutingExecutor({ python });
    const impl = { language: 'python' as const, source: 'def f(): pass' };
    const outs = [];
    for (let i = 0; i < 4; i++) outs.push(await ex.execute(impl, 'f', {}));
    expect(outs.map((o) => o.ok)).toEqual([true, false, false, false]);
    expect(outs[3].output).toBe('an error occured when call f: PyodideExecutor: the executor is closed');
    expect(ex.pythonCounts).toEqual({ calls: 4, errors: 3, timeouts: 1 });
  });
});
