/**
 * Replays gold calls of FTRL test tasks in Pyodide (one Pyodide load for the file) and
 * scores them with the core's `ftrlSolveMetrics`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../types';
import { parseFtrlJsonl } from './importFtrl';
import type { PyodideExecutor } from './pyodideExecutor';
import { createNodePyodideExecutor } from './pyodideExecutorNode';
import { formatFtrlReplayReport, reconstructFtrlGoldCalls, replayFtrlCalls, replayFtrlTasks } from './replay';

const dataDir = process.env.PACT_DATA_DIR ?? '../shared/data';
const testFile = path.resolve(dataDir, 'ftrl/test.jsonl');
const hasData = existsSync(testFile);
if (!hasData)
  console.warn(`[replay.test] FTRL data not found at ${testFile}: the FTRL replay is skipped (set PACT_DATA_DIR)`);

describe.skipIf(!hasData)('FTRL gold-call replay on ../shared/data/ftrl/test.jsonl', () => {
  let executor: PyodideExecutor;
  let tasks: Task[];
  const byId = (id: string): Task => {
    const t = tasks.find((x) => x.id === id);
    if (!t) throw new Error(`no task ${id}`);
    return t;
  };

  beforeAll(async () => {
    tasks = parseFtrlJsonl(readFileSync(testFile, 'utf8')).tasks;
    executor = createNodePyodideExecutor({ timeoutMs: 5_000 });
    await executor.ready();
  }, 120_000);

  afterAll(() => executor?.close());

  it('scores hand-written calls of a multi-hop chain (line 61) with ftrlSolveMetrics', async () => {
    // Calls written by reading the seven tools' Python source of line 61 (search engine →
    // Google → Jeff Dean → Distributed Computing → P vs NP → Dr. John Doe → Munich → Oktoberfest),
    // preceded by one call that answers nothing (smartphone → Apple).
    const task = byId('ftrl-60');
    expect(task.unsolvedSet).toEqual({
      company_identifier: ['Google'],
      notable_individual_finder: ['Jeff Dean'],
      algorithm_concept_explorer: ['Distributed Computing'],
      theorem_finder: ['P vs NP'],
      mathematician_theorem_finder: ['Dr. John Doe'],
      individual_location_finder: ['Munich'],
      cultural_event_identifier: ['Oktoberfest'],
    });
    const calls = [
      { name: 'company_identifier', arguments: { product_or_service: 'smartphone' } },
      { name: 'company_identifier', arguments: { product_or_service: 'search engine' } },
      {
        name: 'notable_individual_finder',
        arguments: { field: 'computer science', company: 'Google', contribution: 'algorithm development' },
      },
      { name: 'algorithm_concept_explorer', arguments: { algorithm_name: "Jeff Dean's algorithm" } },
      { name: 'theorem_finder', arguments: { field: 'Distributed Computing' } },
      { name: 'mathematician_theorem_finder', arguments: { problem: 'P vs NP' } },
      { name: 'individual_location_finder', arguments: { name: 'Dr. John Doe', title: 'Dr.' } },
      { name: 'cultural_event_identifier', arguments: { location: 'Munich' } },
    ];
    const r = await replayFtrlCalls(executor, task, calls);
    expect(r.outputs[0].output).toBe('The company known for its smartphone is Apple.');
    expect(r.outputs[2].output).toBe('{"name": "Jeff Dean"}');
    expect(r.outputs[7].output).toBe(
      '{"events": {"Oktoberfest": {"event_type": "cultural", "time_of_year": "autumn", "event_duration": "week", "event_size": "very large", "cultural_significance": "international"}}}',
    );
    // 8 calls, 7 expected answers, the 7 chain calls solve one each:
    // Solve-P = 7/8, Solve-R = 7/7, Solve-F1 = 2·7/(8 + 7) = 14/15.
    expect(r.metrics.solved).toBe(7);
    expect(r.metrics.solveP).toBeCloseTo(7 / 8, 12);
    expect(r.metrics.solveR).toBe(1);
    expect(r.metrics.solveF1).toBeCloseTo(14 / 15, 12);
  });

  it('reconstructs the call of a hand-read single-hop task (line 1)', async () => {
    // The tool answers only when keywords.lower() equals this literal in its source.
    const rec = await reconstructFtrlGoldCalls(executor, byId('ftrl-0'));
    expect(rec.isComplete).toBe(true);
    expect(rec.calls.map((c) => [c.name, c.arguments])).toEqual([
      ['historical_event_finder', { keywords: 'wikileaks leak the standard us army protocol at guantanamo bay' }],
    ]);
  });

  it('replays the reconstructed gold calls of every task and reports the sub-questions they solve', async () => {
    const t0 = Date.now();
    const report = await replayFtrlTasks(executor, tasks);
    console.log(`[replay.test] FTRL gold-call replay (${Date.now() - t0} ms)\n${formatFtrlReplayReport(report)}`);
    console.log(
      `[replay.test] ${report.missing.length} expected answers without a reconstructed call: ${report.missing.map((m) => `${m.taskId}/${m.name}=${JSON.stringify(m.expected)}`).join(', ')}`,
    );

    const nExpected = tasks.reduce((n, t) => n + Object.values(t.unsolvedSet).reduce((m, a) => m + a.length, 0), 0);
    expect(report.nTasks).toBe(tasks.length);
    expect(report.nExpected).toBe(nExpected);
    // Each call was found by verifying its own expected answer, so replaying it through the
    // ordinary executor path must solve that answer again: solved = calls found. On a
    // reconstructed task this means every sub-question is solved (Solve-R = 1), unless the
    // data is inconsistent (listed in report.inconsistencies).
    expect(report.inconsistencies).toEqual([]);
    expect(report.solvedAllFound).toBe(report.nCallsFound);
    expect(report.solvedReconstructed).toBe(report.expectedReconstructed);
    expect(report.meanReconstructed?.solveR).toBe(1);
    // Regression floors under what this search measured when written (777/820 answers,
    // 161/200 tasks, 197 calls from the data's own example usages); the printed report
    // gives the current numbers.
    expect(report.nCallsFound / report.nExpected).toBeGreaterThanOrEqual(0.9);
    expect(report.reconstructedTaskIds.length).toBeGreaterThanOrEqual(150);
    expect(report.nFoundByExample).toBeGreaterThan(100);
  }, 300_000);
});
