/**
 * Seeded randomness with named sub-streams, so that one run seed reproduces every
 * random choice (anchor gates of PACT Eq. prompt-routing-gate, task order, sampling)
 * whatever order the consumers run in.
 * Generator: sfc32 (Chris Doty-Humphrey's "Small Fast Counting" generator from
 * PractRand, 128-bit state, 32-bit output). Seeding: the cyrb128 string hash
 * (bryc) turns a key string into the four state words; the first 15 outputs are
 * discarded, as bryc recommends, to mix weak seeds.
 * `split(name)` derives a child stream from the key `parentKey + '/' + name`, never
 * from the parent's current state: drawing from one stream cannot change another.
 *
 * Simplifications: `normal()` uses Box–Muller and draws two uniforms per value (no
 * cached second value, so the state is exactly the four words); `next()` has 32 bits
 * of resolution.
 */

export interface RngState {
  /** The stream's key: the root seed as a string, then '/name' per split. */
  key: string;
  /** sfc32's four 32-bit state words a, b, c, d (d is the counter). */
  words: [number, number, number, number];
}

export interface Rng {
  /** The stream's key (root seed, then '/name' per split). */
  readonly key: string;
  /** A float in [0, 1) with 32 bits of resolution. */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** A standard normal draw (mean 0, variance 1). */
  normal(): number;
  /** A child stream derived from this stream's key and `name` only. */
  split(name: string): Rng;
  /** A copy of the current state, for checkpoints. */
  state(): RngState;
}

/** cyrb128: a 128-bit string hash (bryc, public domain) → four uint32 words. */
export function hashCyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** Number of initial sfc32 outputs thrown away after seeding. */
const WARMUP_DRAWS = 15;

class Sfc32Rng implements Rng {
  readonly key: string;
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(key: string, words: readonly number[]) {
    this.key = key;
    this.a = words[0] | 0;
    this.b = words[1] | 0;
    this.c = words[2] | 0;
    this.d = words[3] | 0;
  }

  /** One raw sfc32 step → uint32. */
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  next(): number {
    return this.nextUint32() / 4294967296;
  }

  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new Error(`rng.int(n): n must be a positive integer, got ${n}`);
    return Math.floor(this.next() * n);
  }

  normal(): number {
    const u1 = 1 - this.next(); // (0, 1]: log(u1) is finite
    const u2 = this.next();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }

  split(name: string): Rng {
    if (typeof name !== 'string' || name.length === 0)
      throw new Error('rng.split(name): name must be a non-empty string');
    return seedFromKey(`${this.key}/${name}`);
  }

  state(): RngState {
    return { key: this.key, words: [this.a >>> 0, this.b >>> 0, this.c >>> 0, this.d >>> 0] };
  }
}

function seedFromKey(key: string): Rng {
  const rng = new Sfc32Rng(key, hashCyrb128(key));
  for (let i = 0; i < WARMUP_DRAWS; i++) rng.nextUint32();
  return rng;
}

/** The root stream of a run. `seed` 42 and '42' give the same stream. */
export function createRng(seed: number | string): Rng {
  if (typeof seed === 'number' && !Number.isFinite(seed))
    throw new Error(`createRng(seed): seed must be finite, got ${seed}`);
  if (typeof seed !== 'number' && typeof seed !== 'string')
    throw new Error('createRng(seed): seed must be a number or a string');
  return seedFromKey(String(seed));
}

/** Restores a stream saved with `rng.state()`: it continues exactly where it stopped. */
export function rngFromState(state: RngState): Rng {
  const words = state?.words;
  if (typeof state?.key !== 'string') throw new Error('rngFromState: state.key must be a string');
  if (
    !Array.isArray(words) ||
    words.length !== 4 ||
    !words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffffffff)
  ) {
    throw new Error('rngFromState: state.words must be four uint32 integers');
  }
  return new Sfc32Rng(state.key, words);
}

/**
 * Seeded Fisher–Yates, in place: for i = n−1 down to 1, swap items i and j = rng.int(i + 1).
 * Draws exactly n − 1 integers from `rng`, in that order; the one shuffle of the codebase.
 */
export function shuffleInPlace<T>(rng: Rng, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** A seeded permutation of 0…n−1: shuffleInPlace of [0, 1, …, n−1]. */
export function permutation(n: number, rng: Rng): number[] {
  return shuffleInPlace(
    rng,
    Array.from({ length: n }, (_, i) => i),
  );
}
