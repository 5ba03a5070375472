/**
 * The final answer y stays out of h* (PACT §3.1: "we exclude the final answer y from the
 * expert trace h*"), so out of c^h = [x; h*] and out of the component-SFT row (x; h*),
 * while the plain-SFT episode keeps it. Searched as text, in every spelling the teacher
 * writes it: the answer string and each of its parts (split on , ; "and"), numbers also
 * as Python's json.dumps, with thousands separators and with ".0". h* keeps o*_t, and an
 * expert may pass y on as a call argument (a calculator's max over looked-up years), so y
 * may appear in an observation, and in a turn's text only when that turn's own calls
 * carry it; anywhere else (the answer turn's reasoning above all) is a leak.
 * Generated tasks of every category, and FTRL test tasks (../shared/data/ftrl or
 * $PACT_DATA_DIR; skipped, and said so, without them) with teacher traces over their
 * reconstructed gold calls, run in Pyodide.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICY_KINDS, type TokenTag } from '../../core/types';
import { generateTasks } from '../../envs/generator';
import { callTaskTool, type PyodideExecutor } from '../../envs/ftrl/pyodideExecutor';
import { createNodePyodideExecutor } from '../../envs/ftrl/pyodideExecutorNode';
import { parseFtrlJsonl } from '../../envs/ftrl/importFtrl';
import { reconstructFtrlGoldCalls } from '../../envs/ftrl/replay';
import { DEFAULT_SYSTEM_PROMPT, formatUserPrompt, RolloutEnv } from '../../envs/rollout';
import { InProcessExecutor } from '../../envs/sandbox/index';
import { TASK_CATEGORIES, type Task } from '../../envs/types';
import { loadQwen3TokenizerFromPackage } from '../../model/tokenizer/nodeLoader';
import type { Qwen3Tokenizer } from '../../model/tokenizer/qwen3Tokenizer';
import { formatPythonJson } from '../../traces/render';
import { bindTaskRunner, buildVerifiedTrace, type ToolCallRunner } from '../../traces/teacher';
import type { ExpertTrace } from '../../traces/types';
import { bindRenderChat, encodeEpisode, replayExpertEpisode } from '../policyVocab';
import {
  buildComponentSftRow,
  buildFullSftRow,
  buildPrivilegedContext,
  type SftScheduleConfig,
  type TaggedIds,
} from './privilegedContext';

const dataDir = process.env.PACT_DATA_DIR ?? '../shared/data';
const ftrlFile = path.resolve(dataDir, 'ftrl/test.jsonl');
const hasFtrl = existsSync(ftrlFile);
if (!hasFtrl)
  console.warn(
    `[privilegedAnswer.test] FTRL data not found at ${ftrlFile}: the FTRL-trace checks are skipped (set PACT_DATA_DIR)`,
  );

const SCHEDULE: SftScheduleConfig = {
  reasoningSchedule: 'segment',
  toolCallSchedule: 'scale',
  fullTokenAnneal: false,
  toolCallScaleStart: 0.8,
  toolCallScaleEnd: 0.2,
  annealHorizon: 10,
};

/**
 * Every spelling of y the teacher can write: the string, its parts, numbers as digits in
 * the usual forms. One-letter spellings are left out: they are the question's own option
 * labels (FTRL's "b", or "a, b, c" rankings) and "a" is an article, so no text search can
 * tell them apart; the whole "a, b, c" stays.
 */
export function listAnswerSpellings(answer: string): string[] {
  const parts = [answer, ...answer.split(/\s*(?:,|;|\band\b)\s*/i)]
    .map((p) => p.trim())
    .filter((p) => p.length > 1 || /\d/.test(p));
  const spellings = new Set<string>();
  for (const part of parts) {
    spellings.add(part.toLowerCase());
    const n = Number(part.replace(/,/g, ''));
    if (!Number.isFinite(n) || !/\d/.test(part)) continue;
    spellings.add(formatPythonJson(n));
    spellings.add(n.toLocaleString('en-US'));
    if (Number.isInteger(n)) spellings.add(`${n}.0`);
  }
  return [...spellings];
}

/** True when `spelling` occurs in `text` as a whole token (no letter or digit right before or after it). */
function containsSpelling(text: string, spelling: string): boolean {
  const escaped = spelling.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'iu').test(text);
}

/** The text of a trace-bearing row by turn of h*, observations and the prompt x left out. */
function collectTextByTurn(row: TaggedIds, start: number, tokenizer: Qwen3Tokenizer): Map<number, string> {
  const idsByTurn = new Map<number, number[]>();
  for (let n = start; n < row.ids.length; n++) {
    const tag: TokenTag = row.tags[n];
    if (tag.kind === 'observation' || tag.turn < 0) continue;
    idsByTurn.set(tag.turn, [...(idsByTurn.get(tag.turn) ?? []), row.ids[n]]);
  }
  return new Map([...idsByTurn].map(([turn, ids]) => [turn, tokenizer.decode(ids)]));
}

/**
 * What the teacher writes that is not a value: its verbatim restatements of the question x
 * (y's words may be x's own: "Rome or Paris?"), and its counters, "(call 2)" / "Call 2
 * failed" labels of parallel calls, "2 of 3 steps" recaps, "there are 5 tools". Blanked
 * before the search.
 */
function blankTeacherText(text: string, question = ''): string {
  const q = question.trim();
  const withoutQuestion = q.length > 0 ? text.split(q).join(' [question] ') : text;
  return withoutQuestion
    .replace(/\b[Cc]all \d+\b/g, 'call #')
    .replace(/\b\d+ of (?:the )?\d+ (?:steps|lookups)\b/g, '# of # steps')
    .replace(/\bthere are \d+ tools\b/g, 'there are # tools');
}

/** "turn t: …" for each spelling of y found in a turn whose calls do not carry it; [] when none. */
function findAnswerLeaks(
  textByTurn: Map<number, string>,
  trace: ExpertTrace,
  answer: string,
  question: string,
): string[] {
  const leaks: string[] = [];
  for (const spelling of listAnswerSpellings(answer)) {
    for (const [turn, raw] of textByTurn) {
      const text = blankTeacherText(raw, question);
      if (!containsSpelling(text, spelling)) continue;
      const calls = (trace.turns[turn]?.calls ?? []).map((c) => formatPythonJson(c.arguments)).join(' ');
      if (!containsSpelling(calls, spelling))
        leaks.push(`turn ${turn}: "${spelling}" in ${JSON.stringify(text.slice(-160))}`);
    }
  }
  return leaks;
}

interface TraceCase {
  task: Task;
  trace: ExpertTrace;
}

let tokenizer: Qwen3Tokenizer;
let renderChat: ReturnType<typeof bindRenderChat>;

function encodePrompt(task: Task): TaggedIds {
  const text = renderChat(
    [
      { role: 'system', content: DEFAULT_SYSTEM_PROMPT },
      { role: 'user', content: formatUserPrompt(task) },
    ],
    { tools: task.tools, addGenerationPrompt: true },
  );
  const ids = tokenizer.encode(text);
  return { ids, tags: ids.map(() => ({ kind: 'prompt' as const, turn: -1 })) };
}

/** Checks c^h and the SFT row of each case; returns how many traces hold y in no text of h* at all (not even o*_t). */
function expectNoAnswerInTrace(cases: readonly TraceCase[]): { checked: number; answerOnlyInObservations: number } {
  let answerOnlyInObservations = 0;
  for (const { task, trace } of cases) {
    const answer = trace.finalAnswer ?? task.answer;
    expect(answer.length, task.id).toBeGreaterThan(0);
    const prompt = encodePrompt(task);
    const context = buildPrivilegedContext(prompt, trace, tokenizer);
    const contextText = collectTextByTurn(context, prompt.ids.length, tokenizer);
    expect(findAnswerLeaks(contextText, trace, answer, task.question), `c^h of ${task.id} (y = ${answer})`).toEqual([]);
    for (const step of [1, 5, 10]) {
      const row = buildComponentSftRow(prompt, trace, tokenizer, step, SCHEDULE);
      expect(
        findAnswerLeaks(collectTextByTurn(row, prompt.ids.length, tokenizer), trace, answer, task.question),
        `SFT row of ${task.id} at s = ${step}`,
      ).toEqual([]);
      // The supervised tokens alone (mask > 0): what L_SFT imitates.
      const supervised = {
        ids: row.ids.filter((_, n) => row.mask[n] > 0),
        tags: row.tags.filter((_, n) => row.mask[n] > 0),
      };
      expect(
        findAnswerLeaks(collectTextByTurn(supervised, 0, tokenizer), trace, answer, task.question),
        `SFT targets of ${task.id} at s = ${step}`,
      ).toEqual([]);
    }
    // No reasoning of a turn without calls (the answer turn) is in h*.
    const callFree = new Set(trace.turns.flatMap((t, i) => (t.calls.length === 0 ? [i] : [])));
    expect(
      context.tags.some((t, n) => n >= prompt.ids.length && callFree.has(t.turn) && t.kind === 'reasoning'),
      task.id,
    ).toBe(false);
    const isCarried = trace.turns.some((t) =>
      t.calls.some((c) => listAnswerSpellings(answer).some((s) => containsSpelling(formatPythonJson(c.arguments), s))),
    );
    if (!isCarried) answerOnlyInObservations++;
  }
  return { checked: cases.length, answerOnlyInObservations };
}

beforeAll(async () => {
  const source = await loadQwen3TokenizerFromPackage();
  tokenizer = source;
  renderChat = bindRenderChat(source);
}, 60_000);

describe('the final answer y is not in h* (generated tasks)', () => {
  const executor = new InProcessExecutor();
  const cases: TraceCase[] = [];

  beforeAll(async () => {
    for (const [c, category] of TASK_CATEGORIES.entries()) {
      for (const [i, task] of generateTasks({ seed: 30 + c, n: 6, categories: [category] }).entries()) {
        const { trace, verdict } = await buildVerifiedTrace(task, bindTaskRunner(task, executor), {
          seed: `${c}/${i}`,
          failedCallProb: 0.3,
          previewProb: 0.4,
        });
        if (verdict.rejections.length === 0) cases.push({ task, trace });
      }
    }
  }, 60_000);

  it('neither c^h nor the component-SFT row (all of it, and its supervised tokens) states y, in any category', () => {
    expect(new Set(cases.map((x) => x.task.category))).toEqual(new Set(TASK_CATEGORIES));
    const { checked, answerOnlyInObservations } = expectNoAnswerInTrace(cases);
    expect(checked).toBeGreaterThanOrEqual(20);
    // Most traces never pass y to a call: for them y is nowhere in h* but the observations.
    expect(answerOnlyInObservations).toBeGreaterThan(checked / 2);
  });

  it('the plain-SFT episode keeps the answer turn and y (it is SFT on the whole episode, not h*)', async () => {
    const env = new RolloutEnv({ executor, renderChat });
    for (const { task, trace } of cases.slice(0, 8)) {
      const episode = encodeEpisode(await replayExpertEpisode({ ...task, expertTrace: trace }, env), tokenizer);
      const row = buildFullSftRow(episode);
      const answerIds = row.ids.filter((_, n) => row.tags[n].kind === 'answer' && row.mask[n] > 0);
      expect(tokenizer.decode(answerIds), task.id).toContain(trace.finalAnswer);
      expect(
        row.tags.some((t) => POLICY_KINDS.has(t.kind) && t.turn === trace.turns.length - 1),
        task.id,
      ).toBe(true);
    }
  });

  it('the spellings include the parts of y and its number forms', () => {
    expect(listAnswerSpellings('1759')).toEqual(['1759', '1,759', '1759.0']);
    expect(listAnswerSpellings('Anwick, Sorzo dinar')).toEqual(['anwick, sorzo dinar', 'anwick', 'sorzo dinar']);
    expect(listAnswerSpellings('a, b, c')).toEqual(['a, b, c']);
    expect(containsSpelling('numbers is [1759, 2033]', '1759')).toBe(true);
    expect(containsSpelling('in 17590 or 21759', '1759')).toBe(false);
    expect(listAnswerSpellings('b')).toEqual([]);
    expect(
      containsSpelling(blankTeacherText('(call 2) Call 2 failed; 2 of 3 steps are done; there are 2 tools'), '2'),
    ).toBe(false);
    expect(
      containsSpelling(blankTeacherText('The question asks: Rome or Paris? So Rome.', 'Rome or Paris?'), 'paris'),
    ).toBe(false);
    expect(containsSpelling(blankTeacherText('the answer is 2.'), '2')).toBe(true);
  });
});

describe.skipIf(!hasFtrl)(
  'the final answer y is not in h* (FTRL test tasks, teacher traces over reconstructed gold calls)',
  () => {
    let executor: PyodideExecutor;
    const cases: TraceCase[] = [];

    beforeAll(async () => {
      const tasks = parseFtrlJsonl(readFileSync(ftrlFile, 'utf8')).tasks;
      executor = createNodePyodideExecutor({ timeoutMs: 5_000 });
      await executor.ready();
      for (const category of TASK_CATEGORIES) {
        let found = 0;
        for (const task of tasks.filter((t) => t.category === category).slice(0, 12)) {
          if (found === 3) break;
          const rec = await reconstructFtrlGoldCalls(executor, task);
          if (!rec.isComplete) continue;
          const withGold: Task = {
            ...task,
            goldCalls: rec.calls.map((c) => ({ name: c.name, arguments: c.arguments })),
          };
          const run: ToolCallRunner = async (call) => (await callTaskTool(executor, withGold, call)).observation;
          const { trace, verdict } = await buildVerifiedTrace(withGold, run, {
            seed: task.id,
            failedCallProb: 0.3,
            previewProb: 0.4,
          });
          if (verdict.rejections.length > 0) continue;
          cases.push({ task: withGold, trace });
          found++;
        }
      }
    }, 300_000);

    afterAll(() => executor?.close());

    it('neither c^h nor the component-SFT row states y', () => {
      expect(cases.length).toBeGreaterThanOrEqual(8);
      const { answerOnlyInObservations } = expectNoAnswerInTrace(cases);
      expect(answerOnlyInObservations).toBeGreaterThan(0);
    });
  },
);
