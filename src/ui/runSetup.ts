/**
 * The run-setup form as data: which fields of the training config the page edits,
 * their paper names, and their ranges, options and defaults, all read from the
 * config schema (`src/recipes/config.ts`) rather than kept as a second list.
 *
 * The form holds raw text per field (what the user typed, or what a link carried);
 * `validateSetup` turns it into a config through `resolveConfig` and words each
 * error for the field it belongs to; `serializeSetup` / `parseSetupQuery` put the
 * whole setup into a URL query string and back, so a link reproduces a configuration.
 * A bad value in a link stays in its field with its error; the other fields are kept.
 *
 * Config overrides (form fields win): docs/ui.md.
 */
import { z } from 'zod';
import { ConfigError, resolveConfig, trainConfigSchema, type TrainConfig } from '../recipes/config';
import { mergeDeep } from '../run/experimentFile';
import { RECIPE_NAMES, RECIPE_TITLES } from './recipeNames';
import { getRecipe, hasRecipe } from '../recipes/allRecipes';
import {
  DEFAULT_RUN_SIZE,
  RUN_SIZES,
  SEARCH_EPISODE_TOKENS,
  SEARCH_PROMPT_TOKENS,
  SIZE_KEY,
  isRunSizeId,
  sizeBaseFor,
  type RunSizeId,
} from './runSizes';
import { FIELD_SPECS, type FieldGroup, type FieldKey } from './setupFields';
import { buildFtrlTasksInput } from './ftrlSetup';
import type { RecipeKnob } from '../recipes/types';

export type { FieldGroup, FieldKey } from './setupFields';
import {
  CHOICE_KEYS,
  STARTING_WEIGHTS,
  findUnavailableOptions,
  type ChoiceKey,
  type SetupContext,
} from './setupChoices';
import { KERNEL_LABELS } from './engineKernels';

export interface NumberRange {
  min?: number;
  isMinInclusive: boolean;
  max?: number;
  isMaxInclusive: boolean;
  isInteger: boolean;
}

export interface SetupField {
  /** The query-string key, also the form field's id suffix. */
  key: FieldKey;
  /** Where the value lives in the training config. */
  path: readonly string[];
  /** What the knob is, in words. */
  label: string;
  /** The paper's name for it, when the paper names it (errors use it). */
  symbol?: string;
  group: FieldGroup;
  kind: 'number' | 'choice';
  /** For choices: the valid names (from the config's enums, or RECIPE_NAMES). */
  options?: readonly string[];
  /** For numbers: the schema's range. */
  range?: NumberRange;
  /** The default as form text ('' never: an optional field uses AUTO). */
  defaultText: string;
  /** Spin-button increment for number inputs. */
  inputStep?: string;
  /** A short hint shown under the field. */
  hint?: string;
  /** The recipe knob it belongs to: shown only for recipes that read it (Recipe.knobs). */
  knob?: RecipeKnob;
}

/** Form text of an optional choice left to the app (the backend: a hardware WebGPU adapter, else wasm). */
export const AUTO = 'auto';

export type SetupValues = Record<FieldKey, string>;

/** The schema of one config field, with `.default()` / `.optional()` wrappers removed. */
function findFieldSchema(path: readonly string[]): { schema: z.ZodType; isOptional: boolean } {
  let schema: z.ZodType = trainConfigSchema;
  let isOptional = false;
  const unwrap = () => {
    for (;;) {
      if (schema instanceof z.ZodDefault) schema = schema.unwrap() as z.ZodType;
      else if (schema instanceof z.ZodOptional) {
        schema = schema.unwrap() as z.ZodType;
        isOptional = true;
      } else return;
    }
  };
  for (const key of path) {
    unwrap();
    if (!(schema instanceof z.ZodObject))
      throw new Error(`runSetup: config path ${path.join('.')} does not lead through objects`);
    const next = (schema.shape as Record<string, z.ZodType>)[key];
    if (!next) throw new Error(`runSetup: config has no field ${path.join('.')}`);
    schema = next;
    isOptional = false;
  }
  unwrap();
  return { schema, isOptional };
}

/** Reads min/max/integer from a zod number schema's checks. */
export function readNumberRange(schema: z.ZodType): NumberRange {
  const range: NumberRange = { isMinInclusive: true, isMaxInclusive: true, isInteger: false };
  const checks = (
    (schema as unknown as { def?: { checks?: { _zod: { def: Record<string, unknown> } }[] } }).def?.checks ?? []
  ).map((c) => c._zod.def);
  for (const c of checks) {
    if (c.check === 'number_format' && typeof c.format === 'string' && /int/.test(c.format)) range.isInteger = true;
    if (c.check === 'greater_than' && typeof c.value === 'number') {
      range.min = c.value;
      range.isMinInclusive = c.inclusive === true;
    }
    if (c.check === 'less_than' && typeof c.value === 'number') {
      range.max = c.value;
      range.isMaxInclusive = c.inclusive === true;
    }
  }
  return range;
}

/** The range in words: "0 – 1", "> 0", "whole number ≥ 1". */
export function describeRange(range: NumberRange): string {
  const lo = range.min === undefined ? '' : `${range.isMinInclusive ? '≥' : '>'} ${range.min}`;
  const hi = range.max === undefined ? '' : `${range.isMaxInclusive ? '≤' : '<'} ${range.max}`;
  const bounds =
    range.min !== undefined && range.max !== undefined && range.isMinInclusive && range.isMaxInclusive
      ? `${range.min} – ${range.max}`
      : [lo, hi].filter(Boolean).join(', ');
  return [range.isInteger ? 'whole number' : '', bounds].filter(Boolean).join(' ');
}

/** The config's own defaults (annealHorizon 0 = "the whole run", before resolveConfig fills it). */
const CONFIG_DEFAULTS = trainConfigSchema.parse({}) as unknown as Record<string, unknown>;

function readPath(obj: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>(
    (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
    obj,
  );
}

function buildField(spec: (typeof FIELD_SPECS)[number]): SetupField {
  const { schema, isOptional } = findFieldSchema(spec.path);
  const fallback = readPath(CONFIG_DEFAULTS, spec.path);
  if (spec.key === 'recipe') {
    return { ...spec, kind: 'choice', options: RECIPE_NAMES, defaultText: String(fallback) };
  }
  if (spec.key === 'init') {
    return { ...spec, kind: 'choice', options: STARTING_WEIGHTS, defaultText: String(fallback) };
  }
  if (schema instanceof z.ZodEnum) {
    const names = schema.options.map(String);
    return {
      ...spec,
      kind: 'choice',
      options: isOptional ? [AUTO, ...names] : names,
      defaultText: fallback === undefined ? AUTO : String(fallback),
    };
  }
  if (schema instanceof z.ZodNumber) {
    return { ...spec, kind: 'number', range: readNumberRange(schema), defaultText: String(fallback) };
  }
  throw new Error(`runSetup: config field ${spec.path.join('.')} is neither a number nor an enum`);
}

/** The form's fields, in display order. */
export const SETUP_FIELDS: readonly SetupField[] = FIELD_SPECS.map(buildField);

export const FIELD_BY_KEY = Object.fromEntries(SETUP_FIELDS.map((f) => [f.key, f])) as Record<FieldKey, SetupField>;

export const GROUP_TITLES: Record<FieldGroup, string> = {
  run: 'Run',
  optimisation: 'Rollouts and optimisation',
  pact: 'PACT knobs',
  recipe: 'Recipe knobs',
};

/** Whether the form shows a field for a recipe: every field but the knobs the recipe does not read. */
export function isFieldShown(field: SetupField, recipe: string): boolean {
  if (!field.knob) return true;
  return hasRecipe(recipe) ? getRecipe(recipe).knobs.includes(field.knob) : true;
}

/** Words for the options (keys are the config's names; recipes by their registry title). */
export const OPTION_LABELS: Partial<Record<FieldKey, Record<string, string>>> = {
  recipe: RECIPE_TITLES,
  init: { 'warm-start': 'warm start', scratch: 'random weights' },
  tasks: { generated: 'generated', ftrl: 'loaded FTRL file', 'tool-repo': 'tool repository' },
  reasoning: {
    segment: 'segment (L4 → L0)',
    fixed: 'fixed (L4 always)',
    token: 'token (token count)',
    none: 'none',
  },
  toolCall: {
    scale: 'scale (λa annealed)',
    fixed: 'fixed (λa = start)',
    token: 'token (token count)',
    none: 'none',
  },
  backend: { auto: 'auto' },
  kernels: KERNEL_LABELS,
};

/** The config's own default of each field, as form text (what a config file gets without it). */
function readConfigDefaultValues(): SetupValues {
  return Object.fromEntries(SETUP_FIELDS.map((f) => [f.key, f.defaultText])) as SetupValues;
}

/** The app's default setup: the config's defaults with the default run size's fields (runSizes.ts). */
export function readDefaultValues(): SetupValues {
  return { ...readConfigDefaultValues(), ...RUN_SIZES[DEFAULT_RUN_SIZE].fields };
}

/** What a field starts at in the app: its config default, or the default run size's value. */
export function readAppDefault(key: FieldKey): string {
  return RUN_SIZES[DEFAULT_RUN_SIZE].fields[key] ?? FIELD_BY_KEY[key].defaultText;
}

/** Form text → a value for the schema: numbers parsed (bad text stays text so zod names it). */
function parseFieldText(field: SetupField, text: string): unknown {
  if (field.kind === 'choice') return field.options?.includes(AUTO) && text === AUTO ? undefined : text;
  const trimmed = text.trim();
  if (trimmed === '') return Number.NaN;
  const n = Number(trimmed);
  return Number.isNaN(n) ? trimmed : n;
}

/** The nested config input the form describes, leaving out the fields in `skip`. */
export function buildConfigInput(
  values: SetupValues,
  skip: ReadonlySet<FieldKey> = new Set(),
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of SETUP_FIELDS) {
    if (skip.has(field.key)) continue;
    const value = parseFieldText(field, values[field.key] ?? field.defaultText);
    if (value === undefined) continue;
    let node = input;
    field.path.slice(0, -1).forEach((k) => {
      node[k] = (node[k] as Record<string, unknown> | undefined) ?? {};
      node = node[k] as Record<string, unknown>;
    });
    node[field.path[field.path.length - 1]] = value;
  }
  return input;
}

/** The query key of the config overrides (a JSON object of config fields). */
export const OVERRIDES_KEY = 'overrides';

export interface ParsedOverrides {
  /** The parsed object ({} for empty text), or null when the text is not a JSON object. */
  value: Record<string, unknown> | null;
  /** Why the text was rejected, in words naming the field. */
  error?: string;
}

/** Overrides text → a plain object of config fields ('' and whitespace mean none). */
export function parseOverrides(text: string): ParsedOverrides {
  if (text.trim() === '') return { value: {} };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { value: null, error: `Config overrides (JSON): not valid JSON (${(e as Error).message})` };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return {
      value: null,
      error: 'Config overrides (JSON): must be a JSON object of config fields, e.g. {"pact": {"objective": "Lx"}}',
    };
  }
  return { value: json as Record<string, unknown> };
}

/** Config paths (`pact.anchorProb`) of the overrides that a form field also sets: the form wins. */
export function findIgnoredOverrides(overrides: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const f of SETUP_FIELDS) {
    let node: unknown = overrides;
    for (const k of f.path)
      node =
        node && typeof node === 'object' && !Array.isArray(node) ? (node as Record<string, unknown>)[k] : undefined;
    if (node !== undefined) out.push(`${f.path.join('.')} (the form's ${f.symbol ?? f.label} field)`);
  }
  return out;
}

/**
 * The config input of run size + overrides + form: the size's fields outside the form first
 * (none without a size), the overrides over them, the form's fields over both (form wins).
 */
export function buildSetupConfigInput(
  values: SetupValues,
  overrides: Record<string, unknown>,
  skip: ReadonlySet<FieldKey> = new Set(),
  size?: RunSizeId,
  ftrlFileName?: string | null,
): Record<string, unknown> {
  const env = hasRecipe(values.recipe) ? getRecipe(values.recipe).env : 'tool-use';
  const base = (size ? sizeBaseFor(RUN_SIZES[size], env) : {}) as Record<string, unknown>;
  if (values.tasks !== 'ftrl') return mergeDeep(mergeDeep(base, overrides), buildConfigInput(values, skip));
  // A loaded FTRL file (ftrlSetup.ts): a size's task kinds are for generated tasks; the file's
  // name is tasks.path, and the default split sits under the overrides.
  delete (base.tasks as Record<string, unknown> | undefined)?.categories;
  if (!ftrlFileName) return mergeDeep(mergeDeep(base, overrides), buildConfigInput(values, skip));
  const ftrl = buildFtrlTasksInput(ftrlFileName, overrides);
  const input = mergeDeep(mergeDeep(mergeDeep(base, ftrl.defaults), overrides), buildConfigInput(values, skip));
  return mergeDeep(input, ftrl.fixed);
}

/** Config names in messages → the names the form shows ("toolCallScaleStart" → "λa start"). */
function renameConfigFields(message: string): string {
  let out = message;
  for (const f of SETUP_FIELDS) {
    const leaf = f.path[f.path.length - 1];
    out = out.replace(new RegExp(`\\b${leaf}\\b`, 'g'), f.symbol ?? f.label);
  }
  return out;
}

/** A zod message in words a user reads ("Too big: expected number to be <=1" → "must be ≤ 1"). */
export function wordConfigMessage(message: string): string {
  const rules: [RegExp, (m: RegExpMatchArray) => string][] = [
    [/Too big: expected number to be <=\s*(\S+)/, (m) => `must be ≤ ${m[1]}`],
    [/Too big: expected number to be <\s*(\S+)/, (m) => `must be < ${m[1]}`],
    [/Too small: expected number to be >=\s*(\S+)/, (m) => `must be ≥ ${m[1]}`],
    [/Too small: expected number to be >\s*(\S+)/, (m) => `must be > ${m[1]}`],
    [/expected int/, () => 'must be a whole number'],
    [/expected number/, () => 'must be a number'],
    [/Invalid option: expected one of (.+)/, (m) => `must be one of ${m[1].replace(/"/g, '').split('|').join(', ')}`],
    [/Too small: expected string to have >=1 characters/, () => 'must not be empty'],
  ];
  for (const [re, say] of rules) {
    const m = message.match(re);
    if (m) return say(m);
  }
  return renameConfigFields(message);
}

export interface SetupValidation {
  /** The resolved config when every field is valid, else null. */
  config: TrainConfig | null;
  /** One sentence per field in error, naming the field ("q must be ≤ 1 (got 1.5)"). */
  fieldErrors: Partial<Record<FieldKey, string>>;
  /** Problems that belong to no form field (the overrides' errors, `config.<path>: …`). */
  otherErrors: string[];
  /** Override paths a form field also sets (ignored: the form wins). */
  ignoredOverrides: string[];
  /** The merged config input (form over overrides) that Train sends. */
  input: Record<string, unknown>;
  /** The config with every field in error left at its default: what previews draw. */
  effective: TrainConfig;
  /** Per choice field: option → why it cannot train with the rest of this setup (setupChoices.ts). */
  unavailable: Record<ChoiceKey, Record<string, string>>;
}

/** What validation needs besides the form: the run size (none: the config's defaults outside the form) and a picked model folder. */
export interface ValidationContext extends SetupContext {
  size?: RunSizeId;
}

const FIELD_BY_PATH = new Map(SETUP_FIELDS.map((f) => [['config', ...f.path].join('.'), f]));

function splitIssue(issue: string): { path: string; message: string } {
  const at = issue.indexOf(': ');
  return at < 0 ? { path: '', message: issue } : { path: issue.slice(0, at), message: issue.slice(at + 2) };
}

function checkRecipe(values: SetupValues): string | null {
  const name = values.recipe;
  return (RECIPE_NAMES as readonly string[]).includes(name)
    ? null
    : `unknown recipe "${name}"; valid: ${RECIPE_NAMES.join(', ')}`;
}

/**
 * Validates the form (merged over the run size and the config overrides) through
 * resolveConfig and words each error for its field; errors of fields only the overrides
 * set name the config path. An option the setup cannot train (setupChoices.ts) is an
 * error of its field, so Train is refused on the page with the reason.
 */
export function validateSetup(values: SetupValues, overridesText = '', ctx: ValidationContext = {}): SetupValidation {
  const size = ctx.size;
  const fieldErrors: Partial<Record<FieldKey, string>> = {};
  const otherErrors: string[] = [];
  const parsed = parseOverrides(overridesText);
  if (parsed.error) otherErrors.push(parsed.error);
  const overrides = parsed.value ?? {};
  const hasOverrides = Object.keys(overrides).length > 0;
  const recipeError = checkRecipe(values);
  if (recipeError) fieldErrors.recipe = `Recipe: ${recipeError}`;

  const nameOf = (f: SetupField) => f.symbol ?? f.label;
  const record = (issues: string[]): FieldKey[] => {
    const keys: FieldKey[] = [];
    for (const issue of issues) {
      const { path, message } = splitIssue(issue);
      const field = FIELD_BY_PATH.get(path);
      if (!field) {
        otherErrors.push(hasOverrides ? `Config overrides (JSON): ${issue}` : issue);
        continue;
      }
      keys.push(field.key);
      if (fieldErrors[field.key]) continue;
      const text = values[field.key];
      const worded = wordConfigMessage(message);
      fieldErrors[field.key] =
        `${nameOf(field)} ${worded}${/\bgot\b/.test(worded) ? '' : ` (got ${text.trim() === '' ? 'nothing' : `"${text}"`})`}`;
    }
    return keys;
  };

  const ftrlFileName = ctx.ftrlFileName ?? null;
  const input = buildSetupConfigInput(values, overrides, new Set(), size, ftrlFileName);
  let config: TrainConfig | null = null;
  try {
    config = resolveConfig(input);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    record(e.issues);
  }
  const choiceValues = { recipe: values.recipe, model: values.model, init: values.init, tasks: values.tasks };
  const unavailable = Object.fromEntries(
    CHOICE_KEYS.map((key) => [key, findUnavailableOptions(key, choiceValues, ctx)]),
  ) as Record<ChoiceKey, Record<string, string>>;
  let hasUnavailable = false;
  for (const key of CHOICE_KEYS) {
    const reason = unavailable[key][values[key]];
    if (reason && !fieldErrors[key]) {
      fieldErrors[key] = `${FIELD_BY_KEY[key].label} "${values[key]}": ${reason}`;
      hasUnavailable = true;
    }
  }
  if (recipeError || parsed.error || hasUnavailable) config = null;

  // Previews draw the setup with the broken fields at the app's defaults (the hint's
  // "default"). A cross-field error (λa end above start) can stay or move to another field
  // once one is reset: a field still in error is then left to the config's default, and
  // when nothing more can be reset the preview is the app's default setup. Overrides in
  // error are left out of the preview as a whole.
  const skip = new Set<FieldKey>(Object.keys(fieldErrors) as FieldKey[]);
  const omit = new Set<FieldKey>();
  let effective: TrainConfig | null = config;
  let previewOverrides = overrides;
  for (let tries = 0; !effective && tries <= 2 * SETUP_FIELDS.length + 1; tries++) {
    const previewValues = { ...values };
    for (const k of skip) previewValues[k] = readAppDefault(k);
    try {
      effective = resolveConfig(buildSetupConfigInput(previewValues, previewOverrides, omit, size, ftrlFileName));
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      const before = skip.size + omit.size;
      let hasOtherIssue = false;
      for (const issue of e.issues) {
        const field = FIELD_BY_PATH.get(splitIssue(issue).path);
        if (!field) hasOtherIssue = true;
        else if (!skip.has(field.key)) skip.add(field.key);
        else omit.add(field.key);
      }
      if (hasOtherIssue && Object.keys(previewOverrides).length > 0) previewOverrides = {};
      else if (skip.size + omit.size === before) break;
    }
  }
  if (recipeError && effective) effective = { ...effective, recipe: FIELD_BY_KEY.recipe.defaultText };
  effective ??= resolveConfig(buildSetupConfigInput(readDefaultValues(), {}, new Set(), size));
  return {
    config,
    fieldErrors,
    otherErrors,
    ignoredOverrides: findIgnoredOverrides(overrides),
    input,
    effective,
    unavailable,
  };
}

/**
 * The whole setup as a query string (every field, so a link keeps meaning if defaults
 * change), the run size, plus `overrides=<JSON text>` when there are config overrides.
 */
export function serializeSetup(values: SetupValues, overridesText = '', size?: RunSizeId): string {
  const params = new URLSearchParams();
  for (const f of SETUP_FIELDS) params.set(f.key, values[f.key] ?? f.defaultText);
  if (size) params.set(SIZE_KEY, size);
  if (overridesText.trim() !== '') params.set(OVERRIDES_KEY, overridesText);
  return params.toString();
}

/**
 * A query string → form values, overrides text and run size: known keys taken as text
 * (errors come from validateSetup), the rest default. A link without a size that names
 * every form field or carries overrides (one the app made before sizes existed, or the
 * experiment runner's) means the config's own defaults for the fields outside the form
 * ('paper'), as it did when it was made. No query at all, or a partial one written by hand
 * (`?recipe=gdpo`), is the app's default size with the fields it names.
 */
export function parseSetupQuery(search: string): {
  values: SetupValues;
  overridesText: string;
  size: RunSizeId;
  unknownKeys: string[];
} {
  const params = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const values = readDefaultValues();
  const unknownKeys: string[] = [];
  let overridesText = '';
  const isWholeSetup = params.has(OVERRIDES_KEY) || SETUP_FIELDS.every((f) => params.has(f.key));
  let size: RunSizeId = isWholeSetup ? 'paper' : DEFAULT_RUN_SIZE;
  for (const [key, text] of params) {
    if (key in FIELD_BY_KEY) values[key as FieldKey] = text;
    else if (key === OVERRIDES_KEY) overridesText = text;
    else if (key === SIZE_KEY && isRunSizeId(text)) size = text;
    else unknownKeys.push(key);
  }
  return { values, overridesText, size, unknownKeys };
}

/**
 * A config → the setup that reproduces it: form text for the form's fields and, as
 * overrides, every other field of the config (form fields left out, so nothing is ignored).
 * The experiment runner opens `/?${serializeSetup(values, overridesText)}`.
 */
export function describeConfigAsSetup(config: Record<string, unknown>): { values: SetupValues; overridesText: string } {
  const values = readConfigDefaultValues();
  const rest = structuredClone(config);
  for (const f of SETUP_FIELDS) {
    const v = readPath(config, f.path);
    // A field the config leaves out takes the config's default, not the app's run size.
    values[f.key] = v === undefined ? (f.options?.includes(AUTO) ? AUTO : f.defaultText) : String(v);
    let node = rest as Record<string, unknown> | undefined;
    for (const k of f.path.slice(0, -1)) node = node?.[k] as Record<string, unknown> | undefined;
    if (node) delete node[f.path[f.path.length - 1]];
  }
  return { values, overridesText: JSON.stringify(rest) };
}

/**
 * The search warm start's held-out tool selection before any RL (public/warm-start-search/
 * warm_start.json searchEval, greedy; runSetup.test.ts checks these against the file).
 */
export const SEARCH_WARM_START_HELD_OUT = { queries: 200, f1: 0.57, recall: 0.5, match: 0.28 } as const;

/**
 * What the setup should know about its starting policy before it trains: "warm-start" means,
 * for a search recipe, the second shipped checkpoint, the one that has seen search episodes
 * (WARM_START_SEARCH_DIR, runAssets.ts picks it), so the page says which and what it does
 * before training. Empty otherwise.
 */
export function describeStartingPolicyNote(
  config: Pick<TrainConfig, 'recipe' | 'model' | 'maxResponseTokens'> | null,
): string {
  if (!config || config.model.init !== 'warm-start' || !hasRecipe(config.recipe)) return '';
  if (getRecipe(config.recipe).env !== 'tool-search') return '';
  const h = SEARCH_WARM_START_HELD_OUT;
  const note = `A ${config.recipe} run starts from the search warm start (public/warm-start-search), not the tool-use one: the same qwen3-nano trained on search episodes as well. Before any RL it selects tools at F1 ${h.f1.toFixed(2)} (recall ${h.recall.toFixed(2)}, all tools right in ${Math.round(h.match * 100)}%) on ${h.queries} held-out queries.`;
  if (config.maxResponseTokens >= SEARCH_EPISODE_TOKENS) return note;
  return `${note} At ${config.maxResponseTokens} response tokens many of its episodes are cut before their answer (search results count as response tokens; at 768, 38% were, and held-out F1 fell from 0.65 to 0.43): give it ${SEARCH_EPISODE_TOKENS} (maxResponseTokens, with maxPromptTokens ${SEARCH_PROMPT_TOKENS}), as the run sizes and experiments/toolsearcher.json do.`;
}
