import { beforeAll, describe, expect, it } from 'vitest';
import { loadQwen3TokenizerFromPackage } from './nodeLoader';
import {
  PrunedTokenizer,
  createIdentityMapping,
  listByteLevelBaseIds,
  listByteLevelChars,
  listMandatoryIds,
  parsePrunedVocabMapping,
  selectKeptIds,
} from './prunedVocab';
import type { Qwen3Tokenizer } from './qwen3Tokenizer';

let full: Qwen3Tokenizer;
let baseOnly: PrunedTokenizer;

beforeAll(async () => {
  full = await loadQwen3TokenizerFromPackage();
  baseOnly = new PrunedTokenizer(full, { keptIds: listMandatoryIds(full) });
});

/** Token strings of compact ids (to state expectations readably). */
function spell(p: PrunedTokenizer, ids: number[]): string[] {
  return ids.map((id) => full.tokenString(p.toFullId(id))!);
}

/** mulberry32: a small seeded PRNG so the fuzz strings are the same on every run. */
function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random text from code-point ranges: ASCII, controls, Latin-1, combining marks, Cyrillic, CJK, Hangul, emoji. */
function makeRandomText(random: () => number, maxChars: number): string {
  const ranges: [number, number][] = [
    [0x20, 0x7e],
    [0x20, 0x7e],
    [0x00, 0x1f],
    [0x80, 0xff],
    [0x300, 0x36f],
    [0x400, 0x4ff],
    [0x4e00, 0x9fff],
    [0xac00, 0xd7a3],
    [0x1f300, 0x1f64f],
    [0x1f900, 0x1f9ff],
    [0xe000, 0xe0ff],
  ];
  const n = Math.floor(random() * maxChars);
  let s = '';
  for (let i = 0; i < n; i++) {
    const [lo, hi] = ranges[Math.floor(random() * ranges.length)];
    s += String.fromCodePoint(lo + Math.floor(random() * (hi - lo + 1)));
  }
  return s;
}

describe('kept ids', () => {
  it('the 256 byte-level base tokens and 26 added tokens are mandatory', () => {
    const baseIds = listByteLevelBaseIds(full);
    expect(new Set(baseIds).size).toBe(256);
    // GPT-2 byte map: '!' (byte 33) maps to itself and is id 0; space (32) → 'Ġ' (id 220); byte 0 → 'Ā' (U+0100)
    expect(listByteLevelChars()[32]).toBe('Ġ');
    expect(listByteLevelChars()[0]).toBe('Ā');
    expect(baseIds[33]).toBe(0);
    expect(baseIds[32]).toBe(220);
    expect(listMandatoryIds(full).length).toBe(256 + 26);
  });

  it('adds the corpus tokens: "hello hello world" → hello, Ġhello, Ġworld → 282 + 3 = 285', () => {
    const mapping = selectKeptIds(full, ['hello hello world']);
    expect(mapping.keptIds.length).toBe(285);
    for (const token of ['hello', 'Ġhello', 'Ġworld']) expect(mapping.keptIds).toContain(full.tokenId(token));
  });

  it('caps to the most frequent corpus tokens (ties → smaller id)', () => {
    // "the cat the cat the dog" → the ×1, Ġcat ×2, Ġthe ×2, Ġdog ×1
    const corpus = ['the cat the cat the dog'];
    const ids = (tokens: string[]) => tokens.map((t) => full.tokenId(t)!);
    const extra = (keptIds: number[]) => keptIds.filter((id) => !listMandatoryIds(full).includes(id));
    expect(ids(['the', 'Ġcat', 'Ġthe', 'Ġdog'])).toEqual([1782, 8251, 279, 5562]);
    expect(extra(selectKeptIds(full, corpus).keptIds)).toEqual([279, 1782, 5562, 8251]);
    // top 2 by count: Ġthe (279) and Ġcat (8251), both ×2
    expect(extra(selectKeptIds(full, corpus, { maxCorpusTokens: 2 }).keptIds)).toEqual([279, 8251]);
    // top 3: then the ×1 tie between 'the' (1782) and 'Ġdog' (5562) → 1782
    expect(extra(selectKeptIds(full, corpus, { maxCorpusTokens: 3 }).keptIds)).toEqual([279, 1782, 8251]);
    // a total of 284 = 282 mandatory + 2 corpus tokens
    expect(extra(selectKeptIds(full, corpus, { maxVocabSize: 284 }).keptIds)).toEqual([279, 8251]);
    expect(() => selectKeptIds(full, corpus, { maxVocabSize: 100 })).toThrow(/below the 282 mandatory tokens/);
  });
});

describe('PrunedTokenizer', () => {
  it('with only mandatory tokens, text falls back to bytes: "hello world" → 11 tokens', () => {
    const ids = baseOnly.encode('hello world');
    expect(spell(baseOnly, ids)).toEqual(['h', 'e', 'l', 'l', 'o', 'Ġ', 'w', 'o', 'r', 'l', 'd']);
    expect(baseOnly.decode(ids)).toBe('hello world');
    expect(baseOnly.vocabSize).toBe(282);
    // kept ids ascending: 256 byte ids (all < 151643) then the added tokens 151643, 151644, 151645 → 258
    expect(baseOnly.tokenId('<|im_end|>')).toBe(258);
    expect(baseOnly.tokenId('hello')).toBeUndefined();
    expect(baseOnly.encode('<|im_start|>')).toEqual([257]);
  });

  it('re-expresses a dropped token with the fewest kept pieces', () => {
    const p = new PrunedTokenizer(full, selectKeptIds(full, ['hello']));
    // full: [hello, Ġhello]; Ġhello is dropped → Ġ + hello (2 pieces, not 6 bytes)
    expect(spell(p, p.encode('hello hello'))).toEqual(['hello', 'Ġ', 'hello']);
    // full: [hello, Ġworld]; Ġworld dropped, nothing longer than a byte kept inside it → 6 bytes
    expect(p.encode('hello world').length).toBe(7);
    expect(p.decode(p.encode('hello hello world'))).toBe('hello hello world');
  });

  it('with the full vocabulary the mapping is the identity', () => {
    const identity = new PrunedTokenizer(full, createIdentityMapping(full));
    expect(identity.vocabSize).toBe(full.vocabSize);
    expect(identity.keptIds.every((id, i) => id === i)).toBe(true);
    for (const s of ['Hello world', '<|im_start|>assistant\n<think>\n', 'héllo 世界 🎉']) {
      expect(identity.encode(s)).toEqual(full.encode(s));
    }
    expect(identity.tokenId('<tool_call>')).toBe(151657);
  });

  it('fuzz: any text round-trips exactly (up to NFC, as the full tokenizer) under a small vocabulary', () => {
    const corpus = [
      'The weather in Paris is sunny.',
      '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>',
      '天气很好 🎉',
    ];
    const pruned = new PrunedTokenizer(full, selectKeptIds(full, corpus));
    const random = createRandom(1234);
    let droppedSeen = 0;
    for (let i = 0; i < 150; i++) {
      const text = makeRandomText(random, 40);
      const fullIds = full.encode(text);
      const ids = pruned.encode(text);
      expect(ids.every((id) => Number.isInteger(id) && id >= 0 && id < pruned.vocabSize)).toBe(true);
      const decoded = pruned.decode(ids);
      expect(decoded).toBe(text.normalize('NFC'));
      expect(decoded).toBe(full.decode(fullIds));
      if (fullIds.some((id) => pruned.toCompactId(id) === undefined)) droppedSeen++;
    }
    expect(droppedSeen).toBeGreaterThan(100); // the fallback path was really exercised
    for (const s of corpus) expect(pruned.decode(pruned.encode(s))).toBe(s);
    // a lone surrogate is not encodable as UTF-8: both tokenizers give U+FFFD
    expect(pruned.decode(pruned.encode('\ud800x'))).toBe('\ufffdx');
  });

  it('the mapping survives JSON and gives the same encodings', () => {
    const pruned = new PrunedTokenizer(full, selectKeptIds(full, ['tool call search']));
    const reloaded = new PrunedTokenizer(full, parsePrunedVocabMapping(JSON.parse(JSON.stringify(pruned.toMapping()))));
    const text = 'search the tool call ☂';
    expect(reloaded.encode(text)).toEqual(pruned.encode(text));
  });

  it('rejects bad mappings and bad ids with a named error', () => {
    const mandatory = listMandatoryIds(full);
    expect(() => new PrunedTokenizer(full, { keptIds: mandatory.filter((id) => id !== 220) })).toThrow(
      /lacks mandatory token "Ġ" \(id 220\)/,
    );
    expect(() => parsePrunedVocabMapping({ keptIds: [0, 5, 3] })).toThrow(
      /keptIds\[2\] = 3 is not above keptIds\[1\] = 5/,
    );
    expect(() => parsePrunedVocabMapping({ keptIds: [0, -1] })).toThrow(/keptIds\[1\] = -1/);
    expect(() => parsePrunedVocabMapping([1, 2])).toThrow(/must be an object/);
    expect(() => new PrunedTokenizer(full, { keptIds: [...mandatory, 999999] })).toThrow(/past the vocabulary/);
    expect(() => baseOnly.decode([0, 282])).toThrow(/ids\[1\] = 282 is outside the pruned vocabulary \[0, 282\)/);
  });
});
