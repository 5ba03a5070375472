/**
 * A scripted teacher that writes expert traces h* for generated tasks (PACT App. C,
 * "Expert trajectory generation"): it solves a task from its gold calls through the
 * same tool interface the policy uses (each call executed by an injected callback, the
 * observation recorded), and writes one reasoning paragraph per step, of the chunk
 * kinds the paper's segmentation prompt names. Chunk types are known by construction,
 * so teacher traces need no segmentation; prefix levels come from prefixLevels.ts.
 *
 * Simplifications: a scripted stand-in for the paper's Qwen3-235B teacher; English
 * templates only; genuine tool errors are not retried (the trace then fails
 * verification and is filtered out).
 *
 * Honesty rules, variety and turns: docs/traces.md.
 *
 * The pieces: teacherPlan.ts (which gold calls feed which, the turns),
 * teacherObservations.ts (reading observations), teacherPhrases.ts (the phrasings),
 * teacherSteps.ts (the paragraphs, the turn, the wrong first attempt).
 */
import { createRng } from '../core/rng';
import type { ToolCall } from '../core/types';
import { getOwn } from '../core/untrustedJson';
import { formatToolError } from '../envs/sandbox/types';
import type { Task, ToolImplementation } from '../envs/types';
import {
  castLike,
  extractObservationValue,
  findValueInObservation,
  isAnswerGrounded,
  isErrorObservation,
  normalizeText,
  quoteObservation,
} from './teacherObservations';
import {
  FALLBACK,
  FINAL_GROUNDING,
  PREVIEW,
  REFLECTION_ERROR,
  REFLECTION_SILENT,
  REJECTION,
  RESTATE_FIRST,
  RESTATE_RECAP,
  SELECTION_MANY,
  SELECTION_ONE,
  SUMMARY,
  TOOL_SCAN,
  listCallNames,
} from './teacherPhrases';
import {
  groupCallsIntoTurns,
  listExpectedAnswers,
  planDependencies,
  slotKey,
  type ArgSource,
  type ResolvedCall,
} from './teacherPlan';
import {
  buildTurn,
  corruptCall,
  describeToolPurpose,
  findToolSchema,
  isChance,
  pickOne,
  writeOptionalAnalysis,
  writeRequiredGrounding,
  type Paragraph,
} from './teacherSteps';
import type { ExpertTrace, TraceTurn } from './types';
import { markVerified, type TraceVerdict } from './verify';

export { extractObservationValue, isAnswerGrounded, isErrorObservation } from './teacherObservations';

/** Executes one tool call and returns the observation text (errors included, as text). */
export type ToolCallRunner = (call: ToolCall) => Promise<string>;

/** The part of src/envs/sandbox's executor interface the teacher needs. */
export interface StubExecutor {
  execute(impl: ToolImplementation, toolName: string, args: Record<string, unknown>): Promise<{ output: string }>;
}

/** Binds a sandbox executor to a task's implementations: the observation is the output text. */
export function bindTaskRunner(task: Task, executor: StubExecutor): ToolCallRunner {
  return async (call) => {
    const impl = getOwn(task.implementations, call.name);
    if (!impl) return formatToolError(call.name, 'the tool has no implementation');
    return (await executor.execute(impl, call.name, call.arguments)).output;
  };
}

export interface TeacherOptions {
  seed: number | string;
  /** Probability, per gold call, of a deliberately wrong first attempt. Default 0.15. */
  failedCallProb?: number;
  /** Probability of each optional reasoning step. Default 0.5. */
  optionalStepProb?: number;
  /** Probability, per call turn, of an explicit call preview (a leak). Default 0.3. */
  previewProb?: number;
  /** Turn budget, final-answer turn included (PACT / FTRL default 10). */
  maxTurns?: number;
}

async function executeSafely(execute: ToolCallRunner, call: ToolCall): Promise<string> {
  try {
    const observation = await execute(call);
    return typeof observation === 'string' ? observation : String(observation);
  } catch (err) {
    return `Error: ${(err as Error)?.message ?? String(err)}`;
  }
}

/**
 * Solves `task` from its gold calls through `execute` and returns the expert trace
 * (unverified: see verify.ts, or `buildVerifiedTrace`). Deterministic given the seed,
 * the task and the executor. Throws only when the task has no gold calls.
 */
export async function runTeacher(task: Task, execute: ToolCallRunner, options: TeacherOptions): Promise<ExpertTrace> {
  const goldCalls = task.goldCalls ?? [];
  if (goldCalls.length === 0)
    throw new Error(`runTeacher: task ${task.id} has no goldCalls; the scripted teacher needs them`);
  const failedCallProb = options.failedCallProb ?? 0.15;
  const optionalStepProb = options.optionalStepProb ?? 0.5;
  const previewProb = options.previewProb ?? 0.3;
  const maxTurns = options.maxTurns ?? 10;
  const rng = createRng(options.seed).split(`teacher/${task.id}`);

  const toolNames = task.tools.map((t) => t.function.name);
  const goldNames = new Set(goldCalls.map((c) => c.name));
  const distractors = toolNames.filter((n) => !goldNames.has(n));
  const deps = planDependencies(task, goldCalls);
  const groups = groupCallsIntoTurns(task, deps);
  const goldObservations: Array<string | undefined> = goldCalls.map(() => undefined);
  const goldIssued: Array<ToolCall | undefined> = goldCalls.map(() => undefined);
  const turns: TraceTurn[] = [];
  let stepsDone = 0;

  /** A value of call j read from the producer's actual observation (see the header). */
  const readSlotValue = (gold: unknown, producers: number[]): unknown => {
    const seen = producers.filter((i) => goldObservations[i] !== undefined);
    const containing = seen.filter((i) => findValueInObservation(goldObservations[i]!, String(gold)) !== null);
    const producer = containing.at(-1) ?? seen.at(-1);
    if (producer === undefined) return gold; // unreachable: groups run producers first
    const observation = goldObservations[producer]!;
    return castLike(
      gold,
      findValueInObservation(observation, String(gold)) ?? extractObservationValue(observation, goldIssued[producer]),
    );
  };

  const resolveCall = (j: number): ResolvedCall => {
    const gold = goldCalls[j];
    const question = normalizeText(task.question);
    const args: Record<string, unknown> = {};
    const sources = new Map<string, ArgSource>();
    for (const [arg, value] of Object.entries(gold.arguments ?? {})) {
      let isFromObservation = false;
      if (Array.isArray(value)) {
        args[arg] = value.map((el, e) => {
          const producers = deps[j].get(slotKey(arg, e));
          if (!producers) return el;
          isFromObservation = true;
          return readSlotValue(el, producers);
        });
      } else {
        const producers = deps[j].get(slotKey(arg));
        isFromObservation = producers !== undefined;
        args[arg] = producers ? readSlotValue(value, producers) : value;
      }
      const isStated = value !== null && typeof value !== 'object' && question.includes(normalizeText(String(value)));
      sources.set(arg, isFromObservation ? 'observation' : isStated ? 'question' : 'task');
    }
    return { goldIndex: j, call: { name: gold.name, arguments: args }, sources };
  };

  for (let g = 0; g < groups.length; g++) {
    const remainingGroups = groups.length - g;
    if (turns.length + 2 > maxTurns) break; // no room for this turn and the final-answer turn
    const resolved = groups[g].map((j) => resolveCall(j));
    const schemas = resolved.map((r) => findToolSchema(task, r.call.name));
    const mayFail = turns.length + remainingGroups + 2 <= maxTurns;
    const corruptions = resolved.map((r, k) =>
      mayFail && isChance(rng, failedCallProb) ? corruptCall(rng, r.call, schemas[k]) : null,
    );
    const issued = resolved.map((r, k) => corruptions[k]?.call ?? r.call);
    const names = issued.map((c) => c.name);

    const paragraphs: Paragraph[] = [];
    if (turns.length === 0) {
      paragraphs.push({ type: 'task_restate', text: pickOne(rng, RESTATE_FIRST)(task.question) });
      if (isChance(rng, optionalStepProb))
        paragraphs.push({ type: 'tool_scan', text: pickOne(rng, TOOL_SCAN)(toolNames) });
      if (distractors.length > 0 && isChance(rng, optionalStepProb)) {
        const count = Math.min(distractors.length, 1 + rng.int(2));
        const pool = [...distractors];
        const chosen: string[] = [];
        while (chosen.length < count) chosen.push(pool.splice(rng.int(pool.length), 1)[0]);
        paragraphs.push({ type: 'irrelevant_tool_rejection', text: pickOne(rng, REJECTION)(chosen) });
      }
    } else if (isChance(rng, optionalStepProb)) {
      paragraphs.push({
        type: 'task_restate',
        text: pickOne(rng, RESTATE_RECAP)(task.question, stepsDone, goldCalls.length),
      });
    }
    paragraphs.push(
      issued.length === 1
        ? { type: 'tool_selection', text: pickOne(rng, SELECTION_ONE)(names[0], describeToolPurpose(schemas[0])) }
        : { type: 'tool_selection', text: pickOne(rng, SELECTION_MANY)(listCallNames(names)) },
    );
    resolved.forEach((r, k) => {
      const sources = new Map(r.sources);
      const renamed = corruptions[k]?.renamed;
      if (renamed) sources.set(renamed[0], r.sources.get(renamed[1]) ?? 'task');
      const attempt: ResolvedCall = { ...r, call: issued[k], sources };
      const grounding = writeRequiredGrounding(rng, attempt, schemas[k], issued.length > 1 ? `call ${k + 1}` : '');
      if (grounding) paragraphs.push(grounding);
    });
    issued.forEach((call, k) => {
      const optional = writeOptionalAnalysis(rng, call, schemas[k], false, optionalStepProb);
      if (optional) paragraphs.push(optional);
    });
    if (isChance(rng, optionalStepProb))
      paragraphs.push({ type: 'decision_summary', text: pickOne(rng, SUMMARY)(names) });
    if (isChance(rng, previewProb))
      paragraphs.push({ type: 'explicit_call_preview', text: pickOne(rng, PREVIEW)(issued) });

    const observations: string[] = [];
    for (const call of issued) observations.push(await executeSafely(execute, call));
    turns.push(buildTurn(paragraphs, issued, observations));
    resolved.forEach((r, k) => {
      if (corruptions[k]) return;
      goldObservations[r.goldIndex] = observations[k];
      goldIssued[r.goldIndex] = r.call;
    });

    // A retry turn for the deliberately wrong calls.
    const failed = resolved.map((r, k) => ({ r, k })).filter(({ k }) => corruptions[k] !== null);
    if (failed.length > 0) {
      const retryParagraphs: Paragraph[] = [];
      for (const { k } of failed) {
        const label = issued.length > 1 ? `Call ${k + 1}` : 'The previous call';
        const quoted = quoteObservation(observations[k], toolNames);
        const mistake = corruptions[k]!.mistake;
        retryParagraphs.push({
          type: 'failure_reflection',
          text: isErrorObservation(observations[k])
            ? pickOne(rng, REFLECTION_ERROR)(label, quoted, mistake)
            : pickOne(rng, REFLECTION_SILENT)(label, quoted, mistake),
        });
      }
      retryParagraphs.push({
        type: 'fallback_plan',
        text: pickOne(rng, FALLBACK)(failed.map(({ k }) => corruptions[k]!.fix).join(' and ')),
      });
      for (const { r, k } of failed) {
        const grounding = writeRequiredGrounding(rng, r, schemas[k], failed.length > 1 ? `call ${k + 1}` : '');
        if (grounding) retryParagraphs.push(grounding);
      }
      const retried = failed.map(({ r }) => r.call);
      if (isChance(rng, optionalStepProb))
        retryParagraphs.push({ type: 'decision_summary', text: pickOne(rng, SUMMARY)(retried.map((c) => c.name)) });
      if (isChance(rng, previewProb))
        retryParagraphs.push({ type: 'explicit_call_preview', text: pickOne(rng, PREVIEW)(retried) });
      const retryObservations: string[] = [];
      for (const call of retried) retryObservations.push(await executeSafely(execute, call));
      turns.push(buildTurn(retryParagraphs, retried, retryObservations));
      failed.forEach(({ r }, m) => {
        goldObservations[r.goldIndex] = retryObservations[m];
        goldIssued[r.goldIndex] = r.call;
      });
    }
    stepsDone += groups[g].length;
  }

  // The final-answer turn: grounded in the observations, never copied blindly.
  const seenObservations = goldObservations.filter((o): o is string => o !== undefined);
  const lastTurn = turns.at(-1);
  const lastValues = (lastTurn?.observations ?? []).map((o, k) => extractObservationValue(o, lastTurn?.calls[k]));
  const finalAnswer = isAnswerGrounded(task.answer, seenObservations) ? task.answer : lastValues.join(', ');
  const facts = goldCalls
    .map((c, j) => {
      const observation = goldObservations[j];
      if (observation === undefined) return null;
      const expected = listExpectedAnswers(task, goldCalls, j)
        .map((a) => findValueInObservation(observation, String(a)))
        .find((v) => v !== null);
      return `${c.name} returned ${quoteObservation(expected ?? extractObservationValue(observation, goldIssued[j]), [])}`;
    })
    .filter((f): f is string => f !== null)
    .join('; ');
  const finalText = pickOne(rng, FINAL_GROUNDING)(finalAnswer, facts || 'nothing usable');
  turns.push(buildTurn([{ type: 'final_answer_grounding', text: finalText }], [], []));

  return { taskId: task.id, turns, finalAnswer, source: 'teacher', verified: false };
}

/** Runs the teacher and verifies the trace against the task (PACT App. C filtering). */
export async function buildVerifiedTrace(
  task: Task,
  execute: ToolCallRunner,
  options: TeacherOptions,
): Promise<{ trace: ExpertTrace; verdict: TraceVerdict }> {
  return markVerified(await runTeacher(task, execute, options), task);
}
