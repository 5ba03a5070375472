import { describe, expect, it } from 'vitest';
import { demoTimingSource, fetchDemoRun, parseDemoRun } from './demoRun';

const good = {
  config: { recipe: 'pact' },
  metrics: [{ step: 1, recipe: 'pact', reward: 0.5 }],
  evals: [],
  rollouts: [
    { step: 1, promptIndex: 0, taskId: 't', question: 'q', goldCalls: [], rollouts: [{ segments: [], calls: [] }] },
  ],
};

function respond(body: string, init: { status?: number; type?: string }): typeof fetch {
  return (async () =>
    new Response(body, {
      status: init.status ?? 200,
      headers: { 'content-type': init.type ?? 'application/json' },
    })) as typeof fetch;
}

describe('recorded demo run', () => {
  it('accepts the documented shape', () => {
    expect(parseDemoRun(good).metrics[0].reward).toBe(0.5);
  });

  it('keeps the backend it was recorded on (its step times are measured there), when the file says', () => {
    expect(parseDemoRun({ ...good, recordedWith: { backend: 'wasm', date: 'x' } }).recordedWith).toEqual({
      backend: 'wasm',
    });
    expect(parseDemoRun(good).recordedWith).toBeUndefined();
    expect(parseDemoRun({ ...good, recordedWith: { backend: 3 } }).recordedWith).toBeUndefined();
  });

  it('keeps the thread count its step times were measured on, and the estimate names it', () => {
    const one = parseDemoRun({ ...good, recordedWith: { backend: 'wasm', threads: 1 } });
    expect(one.recordedWith).toEqual({ backend: 'wasm', threads: 1 });
    expect(demoTimingSource(one)).toBe('the recorded demo run on one thread');
    expect(demoTimingSource(parseDemoRun({ ...good, recordedWith: { backend: 'wasm', threads: 4 } }))).toBe(
      'the recorded demo run on 4 threads',
    );
    expect(demoTimingSource(one, 'the recorded search demo run')).toBe('the recorded search demo run on one thread');
    for (const threads of [0, 1.5, '2', -1]) {
      const run = parseDemoRun({ ...good, recordedWith: { backend: 'wasm', threads } });
      expect(run.recordedWith).toEqual({ backend: 'wasm' });
      expect(demoTimingSource(run)).toBe('the recorded demo run');
    }
  });

  it('names the field that is wrong', () => {
    expect(() => parseDemoRun({ ...good, metrics: [{ step: 'x' }] })).toThrow('metrics[0].step must be a number');
    expect(() => parseDemoRun({ ...good, config: 3 })).toThrow('config must be an object');
    expect(() => parseDemoRun({ ...good, rollouts: [{ step: 1, rollouts: [{ segments: 'no' }] }] })).toThrow(
      'rollouts[0].rollouts[0].segments must be an array',
    );
  });

  it('treats a 404 or an HTML fallback page as absent, and bad JSON as an error', async () => {
    expect(
      (await fetchDemoRun(respond('nope', { status: 404, type: 'text/plain' }), 'demo/demo-run.json')).status,
    ).toBe('absent');
    expect((await fetchDemoRun(respond('<!doctype html>', { type: 'text/html' }), 'demo/demo-run.json')).status).toBe(
      'absent',
    );
    const bad = await fetchDemoRun(respond('{"config":{},"metrics":{}}', {}), 'demo/demo-run.json');
    expect(bad).toEqual({
      status: 'error',
      message: 'the recorded demo run (demo/demo-run.json) is malformed: metrics must be an array',
    });
    const ok = await fetchDemoRun(respond(JSON.stringify(good), {}), 'demo/demo-run.json');
    expect(ok.status).toBe('ready');
  });
});
