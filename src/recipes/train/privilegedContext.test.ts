/**
 * c^h, the SFT target and its mask m(s), and the rollout collector's token bookkeeping,
 * on the testKit's generated tasks with teacher traces and pruned tokenizer (no model:
 * the rollout test drives the collector with a scripted policy that replays the expert).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { POLICY_KINDS } from '../../core/types';
import { createRng } from '../../core/rng';
import { DEFAULT_SYSTEM_PROMPT, formatUserPrompt } from '../../envs/rollout';
import { renderTraceMessages } from '../../traces/render';
import type { ExpertTrace } from '../../traces/types';
import type { TokenTag } from '../../core/types';
import { generateTasks } from '../../envs/generator';
import { attachTeacherTraces } from '../policyVocab';
import { renderPrivilegedTrace } from '../../traces/render';
import { resolveConfig } from '../config';
import {
  ASSISTANT_HEADER,
  buildComponentSftRow,
  buildFullSftRow,
  buildPrivilegedContext,
  encodeTaggedSpans,
  encodeTrace,
  type SftScheduleConfig,
  type TaggedIds,
} from './privilegedContext';
import { collectToolUseRollouts } from '../rollouts/rollouts';
import { createTinySetup, type TinySetup } from '../testing/testKit';
import { createToolUsePrompts } from './trainer';
import type { PolicySampler } from '../types';

let setup: TinySetup;
let trace: ExpertTrace;
let prompt: TaggedIds;

beforeAll(async () => {
  setup = await createTinySetup();
  const task = setup.trainTasks.find((t) => t.category === 'multi_hop') ?? setup.trainTasks[0];
  trace = task.expertTrace!;
  const text = setup.renderChat(
    [
      { role: 'system', content: DEFAULT_SYSTEM_PROMPT },
      { role: 'user', content: formatUserPrompt(task) },
    ],
    { tools: task.tools, addGenerationPrompt: true },
  );
  const ids = setup.tokenizer.encode(text);
  prompt = { ids, tags: ids.map(() => ({ kind: 'prompt' as const, turn: -1 })) };
}, 60_000);

const SCHEDULE: SftScheduleConfig = {
  reasoningSchedule: 'segment',
  toolCallSchedule: 'scale',
  fullTokenAnneal: false,
  toolCallScaleStart: 0.8,
  toolCallScaleEnd: 0.2,
  annealHorizon: 10,
};

describe('privileged context c^h = [x; h*]', () => {
  it('is x, then h*, then a fresh assistant header', () => {
    const c = buildPrivilegedContext(prompt, trace, setup.tokenizer);
    const h = encodeTrace(trace, setup.tokenizer);
    const header = setup.tokenizer.encode(ASSISTANT_HEADER);
    expect(c.ids).toEqual([...prompt.ids, ...h.ids, ...header]);
    expect(c.tags.length).toBe(c.ids.length);
    expect(
      h.tags.some((t) => t.kind === 'reasoning') &&
        h.tags.some((t) => t.kind === 'tool_call') &&
        h.tags.some((t) => t.kind === 'observation'),
    ).toBe(true);
    // No final answer in h* (PACT §3.1).
    expect(setup.tokenizer.decode(h.ids)).not.toContain('<answer>');
  });

  it('drops the components the traceComponents ablation turns off (PACT Table 3)', () => {
    const full = encodeTrace(trace, setup.tokenizer);
    for (const [field, kind] of [
      ['reasoning', 'reasoning'],
      ['toolCalls', 'tool_call'],
      ['toolResponses', 'observation'],
    ] as const) {
      const c = buildPrivilegedContext(prompt, trace, setup.tokenizer, {
        reasoning: true,
        toolCalls: true,
        toolResponses: true,
        [field]: false,
      });
      expect(
        c.tags.some((t) => t.kind === kind),
        field,
      ).toBe(false);
      // Everything else is kept: the length drops by exactly the removed tokens (spans encode alone).
      const removed = full.tags.filter((t) => t.kind === kind).length;
      expect(c.ids.length).toBe(
        prompt.ids.length + full.ids.length - removed + setup.tokenizer.encode(ASSISTANT_HEADER).length,
      );
    }
  });
});

describe('component-aware SFT target (PACT Eq. sft-mask)', () => {
  it('step 0: L4 reasoning prefix at 1, tool calls at λa = 0.8, everything else 0', () => {
    const row = buildComponentSftRow(prompt, trace, setup.tokenizer, 0, SCHEDULE);
    expect([row.lambdaA, row.prefixLevel]).toEqual([0.8, 4]);
    row.tags.forEach((t, n) => {
      let expected = 0;
      if (t.kind === 'tool_call') expected = 0.8;
      if (t.kind === 'reasoning' && t.segment! < trace.turns[t.turn].prefixChunkCounts[4]) expected = 1;
      expect(row.mask[n]).toBe(expected);
    });
    expect(row.mask.some((m) => m === 1)).toBe(true);
  });

  it('at the horizon: L0 (no reasoning) and λa = 0.2; full-token annealing keeps nothing', () => {
    const row = buildComponentSftRow(prompt, trace, setup.tokenizer, 10, SCHEDULE);
    // λa(S) = 0.8 − (0.8 − 0.2)·1 = 0.2 (up to float rounding).
    expect(row.lambdaA).toBeCloseTo(0.2, 12);
    expect(row.prefixLevel).toBe(0);
    row.tags.forEach((t, n) => expect(row.mask[n]).toBe(t.kind === 'tool_call' ? row.lambdaA : 0));
    const token = buildComponentSftRow(prompt, trace, setup.tokenizer, 10, { ...SCHEDULE, fullTokenAnneal: true });
    expect(token.mask.every((m) => m === 0)).toBe(true);
    // Full-token at step 0 (fraction 1): every L4-safe reasoning token and every tool-call token at 1.
    const start = buildComponentSftRow(prompt, trace, setup.tokenizer, 0, { ...SCHEDULE, fullTokenAnneal: true });
    start.tags.forEach((t, n) => {
      const isSafe = t.kind === 'reasoning' && t.segment! < trace.turns[t.turn].prefixChunkCounts[4];
      expect(start.mask[n]).toBe(isSafe || t.kind === 'tool_call' ? 1 : 0);
    });
  });

  it("prefixReveal 'remove' (the default) leaves unrevealed reasoning out of the row: x then h* without the chunks the level hides", () => {
    for (const [step, level] of [
      [1, 4],
      [7, 1],
      [10, 0],
    ] as const) {
      const masked = buildComponentSftRow(prompt, trace, setup.tokenizer, step, { ...SCHEDULE, prefixReveal: 'mask' });
      const removed = buildComponentSftRow(prompt, trace, setup.tokenizer, step, SCHEDULE);
      expect([masked.prefixLevel, removed.prefixLevel]).toEqual([level, level]);
      // An independent reading: the spans of h* without the reasoning chunks level L does not reveal
      // (each kept chunk with its own text, paragraph break included), encoded span by span.
      const revealed = renderPrivilegedTrace(trace).spans.filter(
        (sp) => sp.tag.kind !== 'reasoning' || sp.tag.segment! < trace.turns[sp.tag.turn].prefixChunkCounts[level],
      );
      const atLevel = encodeTaggedSpans(revealed, setup.tokenizer);
      expect(removed.ids).toEqual([...prompt.ids, ...atLevel.ids]);
      expect(removed.tags).toEqual([...prompt.tags, ...atLevel.tags]);
      // 'mask' keeps every reasoning token of h* (the unrevealed ones at weight 0) ...
      expect(masked.ids).toEqual([...prompt.ids, ...encodeTrace(trace, setup.tokenizer).ids]);
      // ... and both supervise the same tokens with the same weights.
      expect(removed.ids.filter((_, n) => removed.mask[n] > 0)).toEqual(
        masked.ids.filter((_, n) => masked.mask[n] > 0),
      );
      expect(removed.mask.filter((m) => m > 0)).toEqual(masked.mask.filter((m) => m > 0));
      expect(removed.tags.every((t, n) => t.kind !== 'reasoning' || removed.mask[n] === 1)).toBe(true);
    }
    // At L1 'remove' drops tokens 'mask' keeps.
    expect(buildComponentSftRow(prompt, trace, setup.tokenizer, 7, SCHEDULE).ids.length).toBeLessThan(
      buildComponentSftRow(prompt, trace, setup.tokenizer, 7, { ...SCHEDULE, prefixReveal: 'mask' }).ids.length,
    );
  });

  it("the default reading is 'remove': no explicit call preview is ever in the SFT context (App. C)", async () => {
    expect(resolveConfig({}).pact.prefixReveal).toBe('remove');
    expect(resolveConfig({ pact: { prefixReveal: 'mask' } }).pact.prefixReveal).toBe('mask');
    // Teacher traces of seed 7 over all four categories: enough traces with a preview chunk.
    const tasks = await attachTeacherTraces(generateTasks({ seed: 7, split: 'train', n: 24 }), setup.executor, 7);
    const isPreview = (t: ExpertTrace, tag: TokenTag) =>
      tag.kind === 'reasoning' && t.turns[tag.turn].chunks[tag.segment!].type === 'explicit_call_preview';
    let withPreview = 0;
    let copied = 0;
    for (const task of tasks) {
      const t = task.expertTrace!;
      if (!t.turns.some((turn) => turn.chunks.some((c) => c.type === 'explicit_call_preview'))) continue;
      withPreview++;
      const x = {
        ids: [1, 2],
        tags: [
          { kind: 'prompt' as const, turn: -1 },
          { kind: 'prompt' as const, turn: -1 },
        ],
      };
      for (const step of [1, 5, 10]) {
        const row = buildComponentSftRow(x, t, setup.tokenizer, step, { ...SCHEDULE, prefixReveal: undefined });
        expect(row.tags.some((tag) => isPreview(t, tag))).toBe(false);
        const literal = buildComponentSftRow(x, t, setup.tokenizer, step, { ...SCHEDULE, prefixReveal: 'mask' });
        // Both readings supervise the same tokens with the same weights.
        expect(row.mask.filter((m) => m > 0)).toEqual(literal.mask.filter((m) => m > 0));
        if (step !== 1) continue;
        // 'mask' keeps the preview in the context: the first supervised call's last context
        // reasoning token (ignoring whitespace-only control tokens) is often a preview token.
        const firstCall = literal.tags.findIndex((tag, n) => tag.kind === 'tool_call' && literal.mask[n] > 0);
        let before = firstCall - 1;
        while (before >= 0 && literal.tags[before].kind !== 'reasoning') before--;
        if (before >= 0 && isPreview(t, literal.tags[before])) copied++;
      }
    }
    expect(withPreview).toBeGreaterThanOrEqual(5);
    // The literal reading shows the leak the default removes.
    expect(copied).toBeGreaterThan(0);
  });

  it('plain SFT weighs every policy-written token 1 and the context 0', () => {
    const row = buildFullSftRow({
      ids: [1, 2, 3, 4],
      tags: [
        { kind: 'prompt', turn: -1 },
        { kind: 'reasoning', turn: 0 },
        { kind: 'observation', turn: 0 },
        { kind: 'answer', turn: 1 },
      ],
    });
    expect(row.mask).toEqual([0, 1, 0, 1]);
  });
});

describe('collectToolUseRollouts', () => {
  it('keeps generated ids as generated, tags them through the parse, and appends tagged observations', async () => {
    const task = setup.trainTasks[0];
    const turns = renderTraceMessages(task.expertTrace!, { includeFinalAnswer: true })
      .filter((m) => m.role === 'assistant')
      .map((m) => `${m.content}<|im_end|>`);
    let call = 0;
    // A scripted policy: every row replays the expert's turn `call`, log-prob −0.5 per token.
    const policy: PolicySampler = {
      generate: async (prompts) => {
        const tokens = setup.tokenizer.encode(turns[call++]);
        return prompts.map(() => ({
          tokens,
          logprobs: tokens.map(() => -0.5),
          samplingLogprobs: tokens.map(() => -0.5),
          finishReason: 'stop' as const,
        }));
      },
    };
    const [group] = await collectToolUseRollouts({
      prompts: createToolUsePrompts([task]),
      rolloutsPerPrompt: 2,
      policy,
      tokenizer: setup.tokenizer,
      executor: setup.executor,
      renderChat: setup.renderChat,
      maxTurns: 10,
      maxPromptTokens: 2048,
      maxResponseTokens: 4096,
      temperature: 1,
      topP: 1,
      rng: createRng(1),
    });
    expect(group.rollouts).toHaveLength(2);
    const r = group.rollouts[0];
    expect(r.isFinished).toBe(true);
    expect(r.transcript!.answer).toBe(task.expertTrace!.finalAnswer);
    // ids = the environment's context text (minus the closing text after the last turn).
    const transcript = r.transcript!;
    expect(setup.tokenizer.decode(r.ids) + transcript.turns.at(-1)!.envText).toBe(
      transcript.promptText + transcript.turns.map((t) => t.assistantText + t.envText).join(''),
    );
    // Behaviour log-probs on exactly the generated tokens; observations and prompt get 0.
    const generated = r.tags.filter((t) => POLICY_KINDS.has(t.kind)).length;
    expect(r.generatedLength).toBe(generated);
    r.tags.forEach((t, n) => expect(r.behaviourLogprobs[n]).toBe(POLICY_KINDS.has(t.kind) ? -0.5 : 0));
    expect(r.tags.slice(0, r.promptLength).every((t) => t.kind === 'prompt')).toBe(true);
    expect(r.tags.some((t) => t.kind === 'observation')).toBe(true);
    // The tool-call tokens decode to the expert's calls.
    const callText = setup.tokenizer.decode(
      r.ids.filter((_, n) => r.tags[n].kind === 'tool_call' && r.tags[n].turn === 0),
    );
    expect(callText).toContain(`"name": "${task.expertTrace!.turns[0].calls[0].name}"`);
    expect(r.callOutputs.length).toBe(task.expertTrace!.turns.reduce((s, t) => s + t.calls.length, 0));
  });
});
