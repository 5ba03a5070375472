import { describe, expect, it } from 'vitest';
import { BfclEvalState } from './BfclEvalState.svelte';
import { FtrlEvalState } from './FtrlEvalState.svelte';
import { createFakeClient, type SentRequest } from './testClient';
import type { BfclEvalReport, FtrlEvalReport, WorkerEvent, WorkerResponse } from '../../../workers/protocol';
import type { BfclDataTexts } from '../../envs/bfcl/fileSource';
import type { BfclBackendSources } from '../../envs/bfcl/pythonBackend';
import type { BfclEntryResult } from '../../run/bfclEval';

/** The worker's stand-in; an evaluation's answer waits for `hold` (Stop is answered at once). */
function fakeClient(reply: (req: SentRequest) => WorkerResponse | Error, hold: Promise<void> = Promise.resolve()) {
  return createFakeClient(async (req) => {
    if (req.type !== 'stop-eval') await hold;
    return reply(req);
  });
}

const FTRL_REPORT = { seconds: 1, backend: 'wasm' } as unknown as FtrlEvalReport;
const FTRL_INPUT = {
  tasksText: '{}',
  fileName: 'f.jsonl',
  policy: { kind: 'warm-start' as const },
  settings: { maxTurns: 2, maxResponseTokens: 8, toolTimeoutMs: 100, backend: 'wasm' as const },
};
const BFCL_SETTINGS = { maxResponseTokens: 8, maxSteps: 1, toolTimeoutMs: 100, backend: 'wasm' as const };
const progress = (type: 'ftrl-eval-progress' | 'bfcl-eval-progress', done: number, entry?: BfclEntryResult) =>
  ({ type, requestId: 1, phase: 'rollouts', message: `${done} done`, done, total: 3, entry }) as WorkerEvent;

describe('the task-file evaluations as state (TaskEvalState)', () => {
  it('refuses without a worker, and BFCL without its folders, naming what is missing', async () => {
    const ftrl = new FtrlEvalState();
    await ftrl.evaluate(FTRL_INPUT);
    expect([ftrl.status, ftrl.error]).toEqual([
      'failed',
      'Cannot evaluate: the trainer worker is not running in this page',
    ]);

    const bfcl = new BfclEvalState();
    const w = fakeClient(() => new Error('not sent'));
    bfcl.attach(w.client);
    await bfcl.evaluate({ policy: { kind: 'warm-start' }, settings: BFCL_SETTINGS });
    expect([bfcl.status, bfcl.error]).toEqual([
      'failed',
      "Cannot evaluate: pick BFCL's data folder and your copy of BFCL's source first",
    ]);
    expect(w.sent).toEqual([]);
  });

  it('FTRL: sends eval-ftrl, follows only its own progress while running, keeps the report', async () => {
    let release!: () => void;
    const w = fakeClient(() => ({ id: 1, type: 'ftrl-eval', report: FTRL_REPORT }), new Promise((r) => (release = r)));
    const ftrl = new FtrlEvalState();
    ftrl.attach(w.client);
    w.push(progress('ftrl-eval-progress', 1)); // before Evaluate: ignored
    const running = ftrl.evaluate(FTRL_INPUT);
    expect([ftrl.status, ftrl.phase, ftrl.message, ftrl.done]).toEqual(['running', 'loading', 'starting…', 0]);
    w.push(progress('bfcl-eval-progress', 2)); // the other evaluation's: ignored
    w.push(progress('ftrl-eval-progress', 1));
    expect([ftrl.phase, ftrl.message, ftrl.done, ftrl.total]).toEqual(['rollouts', '1 done', 1, 3]);
    release();
    await running;
    expect(w.sent).toEqual([{ type: 'eval-ftrl', ...FTRL_INPUT }]);
    expect([ftrl.status, ftrl.report, ftrl.error]).toEqual(['finished', FTRL_REPORT, null]);
  });

  it("FTRL: Stop's error ('stopped after …') is 'stopped', any other is 'failed'", async () => {
    const ftrl = new FtrlEvalState();
    ftrl.attach(fakeClient(() => new Error('stopped after 1 of 3 tasks')).client);
    await ftrl.evaluate(FTRL_INPUT);
    expect([ftrl.status, ftrl.error]).toEqual(['stopped', 'The evaluation was stopped: stopped after 1 of 3 tasks']);

    const failing = new FtrlEvalState();
    failing.attach(fakeClient(() => new Error('Pyodide failed to load')).client);
    await failing.evaluate(FTRL_INPUT);
    expect([failing.status, failing.error]).toEqual(['failed', 'The evaluation failed: Pyodide failed to load']);
  });

  it('BFCL: keeps each verdict as it comes, reads Stop from the report, and any error as failed', async () => {
    const entry = { id: 'multi_turn_simple_0', file: 'f.json' } as BfclEntryResult;
    const report = { isStopped: true, seconds: 1, backend: 'wasm' } as unknown as BfclEvalReport;
    let release!: () => void;
    const w = fakeClient(() => ({ id: 1, type: 'bfcl-eval', report }), new Promise((r) => (release = r)));
    const bfcl = new BfclEvalState();
    bfcl.data = {} as BfclDataTexts;
    bfcl.sources = {} as BfclBackendSources;
    bfcl.attach(w.client);
    const running = bfcl.evaluate({ policy: { kind: 'warm-start' }, settings: BFCL_SETTINGS });
    w.push(progress('bfcl-eval-progress', 1, entry));
    w.push(progress('bfcl-eval-progress', 1)); // no entry: the verdicts stay
    expect(bfcl.verdicts).toEqual([entry]);
    release();
    await running;
    expect(w.sent[0]).toMatchObject({ type: 'eval-bfcl', data: {}, sources: {} });
    expect([bfcl.status, bfcl.report]).toEqual(['stopped', report]);

    bfcl.detach();
    bfcl.attach(fakeClient(() => new Error('stopped after 1 of 3 tasks')).client);
    await bfcl.evaluate({ policy: { kind: 'warm-start' }, settings: BFCL_SETTINGS });
    expect([bfcl.status, bfcl.error, bfcl.verdicts]).toEqual([
      'failed',
      'The evaluation failed: stopped after 1 of 3 tasks',
      [],
    ]);
  });

  it('Stop sends stop-eval, and names a refusal', async () => {
    const w = fakeClient((req) =>
      req.type === 'stop-eval' ? new Error('no FTRL evaluation is running') : new Error(''),
    );
    const ftrl = new FtrlEvalState();
    ftrl.attach(w.client);
    await ftrl.stop();
    expect(w.sent).toEqual([{ type: 'stop-eval' }]);
    expect(ftrl.error).toBe('Could not stop the evaluation: no FTRL evaluation is running');
  });
});
