import { describe, expect, it } from 'vitest';
import { createRng, hashCyrb128, permutation, rngFromState, shuffleInPlace, type Rng } from './rng';

// Reference numbers come from an independent C implementation (PractRand's sfc32:
// tmp = a + b + counter++; a = b ^ (b >> 9); b = c + (c << 3); c = rotl(c, 21) + tmp;
// and bryc's cyrb128 written with uint32_t arithmetic), compiled with gcc:
//   key '42'          hash 2814168319 14930478 1039855864 944835771
//                     after 15 warm-up draws: 2258495261 801819658 1739561921 3711374978
//   key 'run-7/gates' after 15 warm-up draws: 3285561161 2418326919 480257964 2803465364
//   key ''            hash 41608494 3485963809 1435736333 1262568316
const TWO_32 = 4294967296;

describe('hashCyrb128', () => {
  it('matches the C reference', () => {
    expect(hashCyrb128('42')).toEqual([2814168319, 14930478, 1039855864, 944835771]);
    expect(hashCyrb128('')).toEqual([41608494, 3485963809, 1435736333, 1262568316]);
  });
});

describe('createRng', () => {
  it('reproduces the C reference sfc32 stream after warm-up', () => {
    const rng = createRng(42);
    const expected = [2258495261, 801819658, 1739561921, 3711374978].map((u) => u / TWO_32);
    expect([rng.next(), rng.next(), rng.next(), rng.next()]).toEqual(expected);
  });

  it('treats seed 42 and "42" alike', () => {
    const a = createRng(42);
    const b = createRng('42');
    expect([a.next(), a.next()]).toEqual([b.next(), b.next()]);
  });

  it('int(n) is floor(next·n): 0.5258…·10 → 5, 0.1867…·10 → 1, 0.4050…·10 → 4, 0.8641…·10 → 8', () => {
    const rng = createRng(42);
    expect([rng.int(10), rng.int(10), rng.int(10), rng.int(10)]).toEqual([5, 1, 4, 8]);
    expect(createRng(3).int(1)).toBe(0);
  });

  it('rejects bad arguments with a clear message', () => {
    const rng = createRng(1);
    expect(() => rng.int(0)).toThrow(/positive integer/);
    expect(() => rng.int(2.5)).toThrow(/positive integer/);
    expect(() => rng.split('')).toThrow(/non-empty/);
    expect(() => createRng(Number.NaN)).toThrow(/finite/);
  });

  it('normal() has mean ≈ 0 and variance ≈ 1 over 20000 draws', () => {
    const rng = createRng('normal-check');
    const xs = Array.from({ length: 20000 }, () => rng.normal());
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1);
    // standard error of the mean is 1/√20000 ≈ 0.007; of the variance ≈ √(2/20000) ≈ 0.01
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(variance - 1)).toBeLessThan(0.05);
    expect(xs.every(Number.isFinite)).toBe(true);
  });
});

describe('split', () => {
  it('derives the child from the key only: run-7 → run-7/gates matches the C reference', () => {
    const gates = createRng('run-7').split('gates');
    expect(gates.key).toBe('run-7/gates');
    const expected = [3285561161, 2418326919, 480257964, 2803465364].map((u) => u / TWO_32);
    expect([gates.next(), gates.next(), gates.next(), gates.next()]).toEqual(expected);
  });

  it('does not depend on draws from the parent or on the order consumers run in', () => {
    const root1 = createRng(7);
    const tasks1 = root1.split('tasks');
    const gates1 = root1.split('gates');
    const tasksFirst = [tasks1.next(), tasks1.next()];
    const gatesSecond = [gates1.next(), gates1.next()];

    const root2 = createRng(7);
    for (let i = 0; i < 10; i++) root2.next(); // the parent has moved on
    const gates2 = root2.split('gates');
    const gatesFirst = [gates2.next(), gates2.next()];
    const tasks2 = root2.split('tasks');
    const tasksSecond = [tasks2.next(), tasks2.next()];

    expect(gatesFirst).toEqual(gatesSecond);
    expect(tasksSecond).toEqual(tasksFirst);
    expect(gatesFirst).not.toEqual(tasksFirst);
  });

  it('nests: split("a").split("b") has key seed/a/b', () => {
    expect(createRng(1).split('a').split('b').key).toBe('1/a/b');
  });
});

describe('state / rngFromState', () => {
  it('continues exactly where the saved stream stopped, through JSON', () => {
    const rng = createRng(99).split('sampling');
    rng.next();
    rng.next();
    const saved = JSON.parse(JSON.stringify(rng.state()));
    const after = [rng.next(), rng.int(100), rng.normal()];
    const restored = rngFromState(saved);
    expect(restored.key).toBe('99/sampling');
    expect([restored.next(), restored.int(100), restored.normal()]).toEqual(after);
    // a restored stream splits like the original
    expect(restored.split('x').next()).toBe(createRng(99).split('sampling').split('x').next());
  });

  it('rejects a malformed state', () => {
    expect(() => rngFromState({ key: 'k', words: [1, 2, 3] as unknown as [number, number, number, number] })).toThrow(
      /four uint32/,
    );
    expect(() => rngFromState({ key: 'k', words: [1, 2, 3, -1] })).toThrow(/four uint32/);
    expect(() => rngFromState({ key: 5 as unknown as string, words: [1, 2, 3, 4] })).toThrow(/key/);
  });
});

describe('shuffleInPlace / permutation', () => {
  /** An Rng whose int() returns scripted values (and records the bounds asked for). */
  function scripted(values: number[]): Rng & { bounds: number[] } {
    const bounds: number[] = [];
    const rng = createRng(0);
    return Object.assign(Object.create(rng), { bounds, int: (n: number) => (bounds.push(n), values.shift()!) });
  }

  it('swaps i with j = int(i + 1) from the top down, by hand', () => {
    // [a b c d]: i=3, j=0 → [d b c a]; i=2, j=2 → unchanged; i=1, j=0 → [b d c a].
    const rng = scripted([0, 2, 0]);
    expect(shuffleInPlace(rng, ['a', 'b', 'c', 'd'])).toEqual(['b', 'd', 'c', 'a']);
    expect(rng.bounds).toEqual([4, 3, 2]);
    expect(permutation(4, scripted([0, 2, 0]))).toEqual([1, 3, 2, 0]);
  });

  it('draws n − 1 integers and leaves the stream where the same draws would', () => {
    const a = createRng(5);
    const b = createRng(5);
    const order = permutation(10, a);
    expect([...order].sort((x, y) => x - y)).toEqual([...Array(10).keys()]);
    for (let i = 9; i > 0; i--) b.int(i + 1);
    expect(a.next()).toBe(b.next());
  });
});
