import { describe, expect, it } from 'vitest';
import { buildSftMaskAtStep } from '../core';
import type { TextTokenizer } from '../model/tokenizer/types';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import { renderPrivilegedTrace } from '../traces/render';
import type { ExpertTrace, ReasoningChunk } from '../traces/types';
import {
  computeMaskAtStep,
  describeRatioRow,
  findRemovedFromRow,
  findSftDesignName,
  summarizeMask,
} from './tokenMaskView';
import { tokenizePrivilegedTrace } from './traceTokens';

/** A word tokenizer: each run of spaces/newlines and each run of other characters is one token. */
function createWordTokenizer(): TextTokenizer {
  const vocab = new Map<string, number>();
  const pieces: string[] = [];
  return {
    encode(text) {
      return (text.match(/\s+|\S+/g) ?? []).map((p) => {
        if (!vocab.has(p)) {
          vocab.set(p, pieces.length);
          pieces.push(p);
        }
        return vocab.get(p)!;
      });
    },
    decode: (ids) => ids.map((id) => pieces[id]).join(''),
    tokenId: (t) => vocab.get(t),
    get vocabSize() {
      return pieces.length;
    },
  };
}

function chunk(id: string, type: ReasoningChunk['type'], text: string, keepForPrefix = true): ReasoningChunk {
  return { id, type, text, keepForPrefix };
}

const turn0Chunks = [
  chunk('C1', 'task_restate', 'Find the capital.\n\n'), // Find · ␣ · the · ␣ · capital. · ↵↵ = 6 tokens
  chunk('C2', 'tool_selection', 'Use get_capital.\n\n'), // Use · ␣ · get_capital. · ↵↵ = 4 tokens
  chunk('C3', 'required_arg_grounding', 'country is Nordia.\n\n'), // country · ␣ · is · ␣ · Nordia. · ↵↵ = 6 tokens
  chunk('C4', 'explicit_call_preview', 'Call get_capital now.', false), // 5 tokens, a leak: never supervised
];
const turn1Chunks = [chunk('C1', 'final_answer_grounding', 'The answer is Varno.')]; // the answer turn: not part of h*

const SMALL_TRACE: ExpertTrace = {
  taskId: 'fx-small',
  source: 'teacher',
  verified: true,
  finalAnswer: 'Varno',
  turns: [
    {
      reasoning: turn0Chunks.map((c) => c.text).join(''),
      chunks: turn0Chunks,
      calls: [{ name: 'get_capital', arguments: { country: 'Nordia' } }],
      observations: ['Varno'],
      prefixChunkCounts: [0, 1, 2, 3, 3], // 3 safe chunks before the leak
    },
    {
      reasoning: turn1Chunks[0].text,
      chunks: turn1Chunks,
      calls: [],
      observations: [],
      prefixChunkCounts: [0, 1, 1, 1, 1],
    },
  ],
};

// S = 10, λa 0.8 → 0.2: at s = 5, λa = 0.8 − 0.6·(5/10) = 0.5 and the level is L4 − floor(5·4/9) = L2.
const OPTIONS = { horizon: 10, toolCallStart: 0.8, toolCallEnd: 0.2 };
const PACT = { kind: 'component', reasoning: 'segment', toolCall: 'scale' } as const;

describe('tokenizePrivilegedTrace', () => {
  const tokens = tokenizePrivilegedTrace(SMALL_TRACE, createWordTokenizer());

  it('keeps every token of h* with its span tag, in order', () => {
    expect(tokens.texts.join('')).toBe(renderPrivilegedTrace(SMALL_TRACE).text);
    const count = (kind: string, turn?: number) =>
      tokens.tags.filter((t) => t.kind === kind && (turn === undefined || t.turn === turn)).length;
    // reasoning: 6 + 4 + 6 + 5 (turn 0); the answer turn (turn 1, no call) is not in h*
    expect(count('reasoning', 0)).toBe(21);
    expect(tokens.tags.filter((t) => t.turn === 1)).toEqual([]);
    expect(tokens.texts.join('')).not.toContain('Varno.');
    // <tool_call> ↵ {"name": ␣ "get_capital", ␣ "arguments": ␣ {"country": ␣ "Nordia"}} ↵ </tool_call> = 13
    expect(count('tool_call')).toBe(13);
    // the leak's 5 tokens are flagged
    expect(tokens.isLeak.filter(Boolean).length).toBe(5);
  });

  it('with λa(s) = 0.5 and level L2: Z = 10 + 13·0.5 = 16.5', () => {
    const at = computeMaskAtStep(tokens, 5, PACT, OPTIONS);
    expect(at.designName).toBe('seg+scale');
    expect(at.reasoning).toEqual({ kind: 'prefix-level', level: 2 });
    expect(at.toolCall).toEqual({ kind: 'scale', scale: 0.5 });
    const summary = summarizeMask(tokens.tags, at.mask);
    // L2 reveals C1, C2 of turn 0 (6 + 4 tokens), weight 1 each;
    // the tool-call span: 13 tokens × 0.5 = 6.5; observations, control and template: 0.
    expect(summary.z).toBeCloseTo(16.5, 12);
    const reasoning = summary.byKind.find((k) => k.kind === 'reasoning')!;
    expect(reasoning).toEqual({ kind: 'reasoning', tokens: 21, supervised: 10, weight: 10 });
    const toolCall = summary.byKind.find((k) => k.kind === 'tool_call')!;
    expect(toolCall.supervised).toBe(13);
    expect(toolCall.weight).toBeCloseTo(6.5, 12);
    expect(summary.byKind.find((k) => k.kind === 'observation')!.weight).toBe(0);
    // no leak token is ever supervised
    expect(at.mask.filter((m, n) => tokens.isLeak[n] && m > 0)).toEqual([]);
  });

  it('at s = 0 (L4, λa = 0.8): Z = 16 + 13·0.8 = 26.4; past S (L0, λa = 0.2): Z = 13·0.2 = 2.6', () => {
    // L4 reveals C1..C3 of turn 0 (6 + 4 + 6 = 16)
    expect(summarizeMask(tokens.tags, computeMaskAtStep(tokens, 0, PACT, OPTIONS).mask).z).toBeCloseTo(26.4, 12);
    expect(summarizeMask(tokens.tags, computeMaskAtStep(tokens, 12, PACT, OPTIONS).mask).z).toBeCloseTo(2.6, 12);
  });

  it('an unregistered pair (fixed + fixed) goes through the schedules: L4 and λa = start', () => {
    const choice = { kind: 'component', reasoning: 'fixed', toolCall: 'fixed' } as const;
    expect(findSftDesignName(choice)).toBeNull();
    const at = computeMaskAtStep(tokens, 9, choice, OPTIONS);
    expect(summarizeMask(tokens.tags, at.mask).z).toBeCloseTo(16 + 13 * 0.8, 12);
  });

  it("Full Token A at s = 5 keeps floor(0.5·N) of each turn's safe reasoning + call tokens", () => {
    const at = computeMaskAtStep(tokens, 5, { kind: 'full-token' }, OPTIONS);
    expect(at.designName).toBe('full-token');
    expect(at.fullTokenFraction).toBe(0.5);
    // turn 0: 16 safe reasoning + 13 call tokens = 29 → floor(14.5) = 14
    expect(summarizeMask(tokens.tags, at.mask).z).toBe(14);
    expect(at.mask).toEqual(buildSftMaskAtStep(tokens.tags, tokens.prefixChunkCounts, 5, 'full-token', OPTIONS));
  });

  it("prefixReveal 'remove' leaves C3 (6) and the leak C4 (5) out of the row at L2; at L4 only the leak; 'mask' nothing", () => {
    const at2 = computeMaskAtStep(tokens, 5, PACT, OPTIONS).mask; // L2 (above)
    const out2 = findRemovedFromRow(tokens.tags, at2, 'remove');
    expect(out2.filter(Boolean).length).toBe(11);
    // exactly the reasoning tokens of segments 2 and 3 (C3, C4) of turn 0
    expect(tokens.tags.filter((_, n) => out2[n]).every((t) => t.kind === 'reasoning' && t.segment! >= 2)).toBe(true);
    const at4 = computeMaskAtStep(tokens, 0, PACT, OPTIONS).mask; // L4: C1..C3 revealed
    expect(findRemovedFromRow(tokens.tags, at4, 'remove')).toEqual(tokens.isLeak);
    expect(findRemovedFromRow(tokens.tags, at2, 'mask').some(Boolean)).toBe(false);
  });

  it('summarizeMask names a length mismatch', () => {
    expect(() => summarizeMask(tokens.tags, [1, 2])).toThrow(/tags but 2 mask weights/);
  });
});

describe('the ratio row', () => {
  it('h* is context only; only the rollout carries r^h', () => {
    const row = describeRatioRow({ promptTokens: 300, traceTokens: 120 });
    expect(row.map((p) => [p.id, p.carriesRatio])).toEqual([
      ['x', false],
      ['h', false],
      ['tau', true],
    ]);
    expect(row[1].detail).toContain('120 tokens');
  });
});

describe('with the real Qwen3 tokenizer', () => {
  it('decoding each token of h* gives back the rendered text', async () => {
    const tokenizer = await loadQwen3TokenizerFromPackage();
    const tokens = tokenizePrivilegedTrace(SMALL_TRACE, tokenizer);
    expect(tokens.texts.join('')).toBe(renderPrivilegedTrace(SMALL_TRACE).text);
    // <think>, </think>-side control and <|im_end|> are single added tokens
    expect(tokens.texts).toContain('<tool_call>');
    expect(tokens.texts).toContain('<|im_end|>');
  });
});
