/**
 * The Run setup form's fields, in display order: each one's query-string key, where it lives in
 * the training config, its label and paper symbol, its group and (for a recipe's own knob) the
 * knob. The keys here are the only list of field names: FieldKey is derived from it.
 */
import type { RecipeKnob } from '../recipes/types';
import { KERNELS_HINT } from './engineKernels';

export type FieldGroup = 'run' | 'optimisation' | 'pact' | 'recipe';

export interface FieldSpec {
  key: string;
  path: readonly string[];
  label: string;
  symbol?: string;
  group: FieldGroup;
  inputStep?: string;
  hint?: string;
  knob?: RecipeKnob;
}

export const FIELD_SPECS = [
  { key: 'recipe', path: ['recipe'], label: 'Recipe', group: 'run' },
  { key: 'model', path: ['model', 'preset'], label: 'Model preset', group: 'run' },
  {
    key: 'init',
    path: ['model', 'init'],
    label: 'Starting weights',
    group: 'run',
    hint: 'the warm start is trained on tool use; the search recipes take the search warm start',
  },
  { key: 'tasks', path: ['tasks', 'source'], label: 'Task source', group: 'run' },
  { key: 'steps', path: ['steps'], label: 'Training steps', symbol: 'T', group: 'run', inputStep: '1' },
  { key: 'seed', path: ['seed'], label: 'Seed', group: 'run', inputStep: '1', hint: 'drives every random choice' },
  {
    key: 'backend',
    path: ['backend'],
    label: 'Backend',
    group: 'run',
    hint: 'auto: a hardware GPU if there is one, else wasm',
  },
  { key: 'kernels', path: ['engineKernels'], label: 'Engine kernels', group: 'run', hint: KERNELS_HINT },
  {
    key: 'K',
    path: ['rolloutsPerPrompt'],
    label: 'Rollouts per prompt',
    symbol: 'K',
    group: 'optimisation',
    inputStep: '1',
    knob: 'rollouts',
  },
  { key: 'batch', path: ['batchPrompts'], label: 'Prompts per batch', group: 'optimisation', inputStep: '1' },
  { key: 'miniBatch', path: ['miniBatchPrompts'], label: 'PPO mini-batch', group: 'optimisation', inputStep: '1' },
  { key: 'lr', path: ['lr'], label: 'Learning rate', group: 'optimisation', inputStep: 'any' },
  {
    key: 'q',
    path: ['pact', 'anchorProb'],
    label: 'Anchoring probability',
    symbol: 'q',
    group: 'pact',
    knob: 'pact',
    inputStep: '0.05',
  },
  {
    key: 'betaSft',
    path: ['pact', 'betaSft'],
    label: 'SFT loss scale',
    symbol: 'β_SFT',
    group: 'pact',
    knob: 'pact',
    inputStep: '0.05',
  },
  {
    key: 'lambdaStart',
    path: ['pact', 'toolCallScaleStart'],
    label: 'Tool-call start',
    symbol: 'λa start',
    group: 'pact',
    knob: 'pact',
    inputStep: '0.05',
  },
  {
    key: 'lambdaEnd',
    path: ['pact', 'toolCallScaleEnd'],
    label: 'Tool-call end',
    symbol: 'λa end',
    group: 'pact',
    knob: 'pact',
    inputStep: '0.05',
  },
  {
    key: 'horizon',
    path: ['pact', 'annealHorizon'],
    label: 'Annealing horizon',
    symbol: 'S',
    group: 'pact',
    knob: 'pact',
    inputStep: '1',
    hint: '0 = the whole run',
  },
  { key: 'reasoning', path: ['pact', 'reasoningSchedule'], label: 'Reasoning schedule', group: 'pact', knob: 'pact' },
  { key: 'toolCall', path: ['pact', 'toolCallSchedule'], label: 'Tool-call schedule', group: 'pact', knob: 'pact' },
  {
    key: 'chordMu',
    path: ['chordMu'],
    label: 'SFT weight',
    symbol: 'μ',
    group: 'recipe',
    inputStep: '0.05',
    knob: 'chordMu',
    hint: '(1 − μ)·GRPO + μ·SFT',
  },
  {
    key: 'sftSteps',
    path: ['sftSteps'],
    label: 'SFT steps first',
    group: 'recipe',
    inputStep: '1',
    knob: 'sftSteps',
    hint: 'then MatchTIR',
  },
] as const satisfies readonly FieldSpec[];

/** A field's query-string key: one of FIELD_SPECS' keys. */
export type FieldKey = (typeof FIELD_SPECS)[number]['key'];
