// How elementwise and row kernels are cut into tasks: slices that tile [0, n) exactly, start at
// multiples of 4 (so every element takes the same 4-wide path whoever runs it), and one call on
// one thread or under the dispatch threshold. That the bits then match on 1, 2 and 3 threads is
// threads.test.ts's (its first batch, 1,040 rows, takes both split paths).
import { describe, expect, it } from 'vitest';
import type { EngineRuntime } from './runtime';
import type { KernelCall } from './threads';
import { sliceElements, sliceRows } from './threadSplit';

function recorder(threads: number) {
  const tasks: (readonly KernelCall[])[] = [];
  const rt = { threads, parallel: (ts: readonly (readonly KernelCall[])[]) => tasks.push(...ts) };
  return { rt: rt as unknown as EngineRuntime, tasks };
}

const call = (i0: number, n: number): KernelCall => ['axpy', i0, 0, n, 1, 0];

describe('sliceElements', () => {
  it('cuts 100,000 floats on 2 threads into 4 slices of 25,000 that tile them', () => {
    const { rt, tasks } = recorder(2);
    sliceElements(rt, 100_000, call);
    // ceil(100000 / 4 / 4) · 4 = 25,000
    expect(tasks.map((t) => [t[0][1], t[0][3]])).toEqual([
      [0, 25_000],
      [25_000, 25_000],
      [50_000, 25_000],
      [75_000, 25_000],
    ]);
  });

  it('starts every slice at a multiple of 4 when n / (2 · threads) is not one', () => {
    const { rt, tasks } = recorder(3);
    const n = 65_540; // ceil(65540 / 6 / 4) · 4 = 10,924: five slices of it and a last one of 10,920
    sliceElements(rt, n, call);
    const spans = tasks.map((t) => [t[0][1] as number, t[0][3] as number]);
    expect(spans.map(([i0]) => i0 % 4)).toEqual(spans.map(() => 0));
    expect(spans.at(-1)).toEqual([54_620, 10_920]);
    let next = 0;
    for (const [i0, count] of spans) {
      expect(i0).toBe(next);
      next += count;
    }
    expect(next).toBe(n);
  });

  it('is one call on one thread, and under the threshold on any', () => {
    for (const [threads, n] of [
      [1, 1_000_000],
      [2, 65_532],
    ]) {
      const { rt, tasks } = recorder(threads);
      sliceElements(rt, n, call);
      expect(tasks).toEqual([[call(0, n)]]);
    }
  });
});

describe('sliceRows', () => {
  it('cuts 10 rows on 2 threads into slices of ceil(10 / 4) = 3', () => {
    const { rt, tasks } = recorder(2);
    sliceRows(rt, 10, call);
    expect(tasks.map((t) => [t[0][1], t[0][3]])).toEqual([
      [0, 3],
      [3, 3],
      [6, 3],
      [9, 1],
    ]);
  });
});
