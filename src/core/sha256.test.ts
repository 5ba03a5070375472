import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRng } from './rng';
import { computeSha256Hex } from './sha256';

const utf8 = (s: string) => new TextEncoder().encode(s);
const reference = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('computeSha256Hex', () => {
  it('matches the FIPS 180-4 examples', () => {
    expect(computeSha256Hex(utf8(''))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(computeSha256Hex(utf8('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(computeSha256Hex(utf8('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('matches node:crypto at every length around the block and padding edges, and on a sub-array', () => {
    const rng = createRng('sha256');
    const bytes = Uint8Array.from({ length: 300 }, () => rng.int(256));
    for (let n = 0; n <= 200; n++)
      expect(computeSha256Hex(bytes.subarray(0, n)), `length ${n}`).toBe(reference(bytes.subarray(0, n)));
    expect(computeSha256Hex(bytes.subarray(7, 250))).toBe(reference(bytes.subarray(7, 250)));
    const big = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 2654435761) >>> 24);
    expect(computeSha256Hex(big)).toBe(reference(big));
  });
});
