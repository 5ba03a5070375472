// The thread pool's calling conventions: `invoke` passes a call's arguments in place, at every
// arity (the task kernels' own and any other), and `parallelBeside` runs posted tasks on a worker
// while the calling thread runs its own share, returning only once both are done, also when the
// calling thread's share throws.
import { describe, expect, it } from 'vitest';
import { KERNEL_PARAMS } from './kernelCalls';
import { EngineRuntime } from './runtime';
import { invoke, TASK_KERNELS, type KernelCall } from './threads';

describe('invoke', () => {
  it('calls f with a[p], …, a[p + n − 1] for n from 0 to 30, from an array and from a Float64Array', () => {
    const arities = new Set(TASK_KERNELS.map((k) => KERNEL_PARAMS[k].length));
    expect([...arities].sort((a, b) => a - b)).toEqual([4, 5, 6, 7, 9, 10, 11, 14, 18, 26]);
    for (let n = 0; n <= 30; n++) {
      const values = Array.from({ length: n + 5 }, (_, i) => 1000 + i * 7);
      for (const a of [values, new Float64Array(values)]) {
        let got: number[] = [];
        invoke((...args: number[]) => void (got = args), a, 3, n);
        expect(got, `n = ${n}`).toEqual(values.slice(3, 3 + n));
      }
    }
  });
});

describe('parallelBeside', () => {
  // axpy with alpha 2 from a buffer of ones: a task's result is 2s where it ran.
  const fill = (x: number, y: number, n: number): KernelCall => ['axpy', x, y, n, 2, 0];

  it('runs the posted tasks on the worker while the calling thread runs its share', async () => {
    const rt = new EngineRuntime(4 << 20, true);
    await rt.startThreads(2);
    const n = 1 << 16;
    const ones = rt.allocFrom(new Float32Array(n).fill(1));
    const outs = [rt.alloc(n), rt.alloc(n), rt.alloc(n)];
    let ranLocal = false;
    rt.parallelBeside([[fill(ones, outs[1], n)], [fill(ones, outs[2], n)]], () => {
      rt.k.axpy(ones, outs[0], n, 3, 0);
      ranLocal = true;
    });
    expect(ranLocal).toBe(true);
    expect(rt.read(outs[0], n).every((v) => v === 3)).toBe(true);
    for (const o of outs.slice(1)) expect(rt.read(o, n).every((v) => v === 2)).toBe(true);
  });

  it('waits for the posted tasks when the calling thread throws, and without workers runs both here', async () => {
    const shared = new EngineRuntime(4 << 20, true);
    await shared.startThreads(2);
    const alone = new EngineRuntime(4 << 20, false);
    for (const rt of [shared, alone]) {
      const n = 1 << 16;
      const ones = rt.allocFrom(new Float32Array(n).fill(1));
      const out = rt.allocZeroed(n);
      expect(() =>
        rt.parallelBeside([[fill(ones, out, n)]], () => {
          throw new Error('the calling thread failed');
        }),
      ).toThrow('the calling thread failed');
      // On return the worker's task has run; without a worker the calling thread runs its share
      // first, so its throw leaves the task unrun.
      expect(rt.read(out, n).every((v) => v === (rt === shared ? 2 : 0))).toBe(true);
      let order = '';
      rt.parallelBeside([[fill(ones, out, n)]], () => void (order += 'local'));
      order += ' then returned';
      expect(order).toBe('local then returned');
      expect(rt.read(out, n).every((v) => v === 2)).toBe(true);
    }
  });
});
