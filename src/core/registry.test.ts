import { describe, expect, it } from 'vitest';
import { createRegistry } from './registry';

describe('createRegistry', () => {
  it('registers, lists in order, and fails naming the valid names', () => {
    const r = createRegistry<number>('widget');
    r.register('b', 2);
    r.register('a', 1);
    expect(r.names()).toEqual(['b', 'a']);
    expect(r.get('a')).toBe(1);
    expect(r.has('c')).toBe(false);
    expect(() => r.get('c')).toThrow('unknown widget "c"; valid: b, a');
    expect(() => r.register('a', 3)).toThrow(/registered twice/);
    expect(() => r.register('', 3)).toThrow(/non-empty/);
  });
});
