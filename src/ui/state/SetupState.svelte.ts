/**
 * The run setup as reactive state: the form's raw text per field, the run size (runSizes.ts),
 * the advanced config overrides (JSON text, merged over the size: form fields win over
 * both), a picked Qwen3 folder, their validation through `resolveConfig`, and the query
 * string that carries all but the folder in the URL. Only Run setup edits it; the teaching
 * panels keep their own values (TeachingState) and copy them here on request.
 * With the "loaded FTRL file" task source it reads the Task files panel's file (TaskFileState)
 * and plans the run on it (ftrlSetup.ts: split, recipes, prompts in the window); `startBlock`
 * says why Train cannot start, and `startOptions` is what Train sends besides the config.
 */
import type { PickedModelFolder } from '../modelFolder';
import {
  SETUP_FIELDS,
  parseSetupQuery,
  parseOverrides,
  readAppDefault,
  readDefaultValues,
  serializeSetup,
  validateSetup,
  type FieldKey,
  type SetupValues,
} from '../runSetup';
import { DEFAULT_RUN_SIZE, RUN_SIZES, type RunSizeId } from '../runSizes';
import { CHOICE_KEYS, describeLockedField, type ChoiceKey } from '../setupChoices';
import { hasRelaxedSimd } from '../../model/engine/kernelChoice';
import { describeFtrlPolicy, planFtrlSetup } from '../ftrlSetup';
import type { StartModelFolder } from './TrainingState.svelte';
import type { TaskFileState } from './TaskFileState.svelte';

/** What a form field reads and writes (SetupState, or a teaching panel's own TeachingState). */
export interface FieldSource {
  readonly values: SetupValues;
  set(key: FieldKey, text: string): void;
  errorOf(key: FieldKey): string | undefined;
  /** Option → why it cannot train with the rest of the setup (choice fields). */
  unavailableOf?(key: FieldKey): Record<string, string>;
  /** Why the field is not in use at all; null when it is. */
  lockedReasonOf?(key: FieldKey): string | null;
  /** The field's starting value in the app (the hint's "default"). */
  defaultOf?(key: FieldKey): string;
}

export class SetupState implements FieldSource {
  values = $state<SetupValues>(readDefaultValues());
  /** How much work a step does (runSizes.ts): sets K, the batch and a few fields outside the form. */
  size = $state<RunSizeId>(DEFAULT_RUN_SIZE);
  /** Advanced: a JSON object of config fields the form does not carry ('' = none). */
  overridesText = $state('');
  /** Query keys a link carried that the form does not know (shown, then dropped). */
  unknownKeys = $state<string[]>([]);
  /** A Qwen3 folder picked as the model ($state.raw: its File objects go to the worker as they are). */
  modelFolder = $state.raw<PickedModelFolder | null>(null);

  /** The Task files panel's loaded file, the "loaded FTRL file" source (null: none can be loaded here). */
  readonly taskFiles: TaskFileState | null;
  /** Whether this page's WebAssembly validates relaxed SIMD: the fma engine kernels are offered only then. */
  readonly hasRelaxedSimd: boolean;

  constructor(taskFiles: TaskFileState | null = null, options: { hasRelaxedSimd?: boolean } = {}) {
    this.taskFiles = taskFiles;
    this.hasRelaxedSimd = options.hasRelaxedSimd ?? hasRelaxedSimd();
  }

  validation = $derived.by(() =>
    validateSetup(this.values, this.overridesText, {
      size: this.size,
      modelFolderName: this.modelFolder?.name ?? null,
      ftrlFileName: this.taskFiles?.file?.name ?? null,
      hasRelaxedSimd: this.hasRelaxedSimd,
    }),
  );
  /** The policy whose window and vocabulary FTRL prompts are measured in (null: unknown preset). */
  ftrlPolicy = $derived(
    describeFtrlPolicy({ folder: this.modelFolder, preset: this.values.model, init: this.values.init }),
  );
  /** The run on the loaded FTRL file, as Run setup shows it (null for other sources, or while the setup has errors). */
  ftrlPlan = $derived.by(() => {
    const file = this.taskFiles?.file;
    const config = this.validation.config;
    const policy = this.ftrlPolicy;
    if (this.values.tasks !== 'ftrl' || !file || !config || !policy) return null;
    return planFtrlSetup({
      file: { name: file.name, text: file.text },
      config,
      model: policy.model,
      promptTokens: this.taskFiles!.promptTokensIn(policy.vocab),
      isLowerBound: policy.isLowerBound,
    });
  });
  /** Why Train cannot start with this setup though every field is valid (an FTRL run that would be refused); null when it can. */
  startBlock = $derived(this.ftrlPlan?.blockReason ?? null);
  /** What Train sends: the run size, the overrides over it and the form's fields over both. */
  configInput = $derived(this.validation.input);
  effective = $derived(this.validation.effective);
  isValid = $derived(this.validation.config !== null);
  queryString = $derived(serializeSetup(this.values, this.overridesText, this.size));
  /** True while every field holds the app's default, at the default size, with no overrides. */
  isAllDefault = $derived(
    SETUP_FIELDS.every((f) => this.values[f.key] === readAppDefault(f.key)) &&
      this.size === DEFAULT_RUN_SIZE &&
      this.overridesText.trim() === '',
  );

  /** Restores the setup from a query string (`location.search`). */
  loadQuery(search: string): void {
    const { values, overridesText, size, unknownKeys } = parseSetupQuery(search);
    this.values = values;
    this.overridesText = overridesText;
    this.size = size;
    this.unknownKeys = unknownKeys;
  }

  set(key: FieldKey, text: string): void {
    this.values[key] = text;
  }

  /** Several fields at once (a teaching panel's "use these values in my run"). */
  setMany(values: Partial<SetupValues>): void {
    for (const [key, text] of Object.entries(values)) if (text !== undefined) this.values[key as FieldKey] = text;
  }

  /** Picks a run size: its form fields take its values; the fields outside the form follow it. */
  applySize(size: RunSizeId): void {
    this.size = size;
    this.setMany(RUN_SIZES[size].fields);
  }

  setOverrides(text: string): void {
    this.overridesText = text;
  }

  errorOf(key: FieldKey): string | undefined {
    return this.validation.fieldErrors[key];
  }

  unavailableOf(key: FieldKey): Record<string, string> {
    return (CHOICE_KEYS as readonly string[]).includes(key) ? this.validation.unavailable[key as ChoiceKey] : {};
  }

  lockedReasonOf(key: FieldKey): string | null {
    return describeLockedField(key, { modelFolderName: this.modelFolder?.name ?? null });
  }

  defaultOf(key: FieldKey): string {
    return readAppDefault(key);
  }

  /**
   * What Train sends besides the config: the setup's errors or block (then nothing is sent),
   * the picked folder, and the loaded FTRL file when the run trains on it.
   */
  startOptions(): {
    localError?: string;
    modelFolder: StartModelFolder | null;
    taskFile?: { name: string; text: string };
  } {
    const errors = [...Object.values(this.validation.fieldErrors), ...this.validation.otherErrors];
    if (errors.length === 0 && this.startBlock) errors.push(this.startBlock);
    const file = this.taskFiles?.file;
    return {
      ...(errors.length > 0 ? { localError: errors.join('; ') } : {}),
      modelFolder: this.modelFolder,
      ...(this.values.tasks === 'ftrl' && file ? { taskFile: { name: file.name, text: file.text } } : {}),
    };
  }

  /** Sets one top-level config field in the overrides ("maxPromptTokens"), keeping the others. */
  setOverride(key: string, value: unknown): void {
    const parsed = parseOverrides(this.overridesText);
    const next = { ...(parsed.value ?? {}), [key]: value };
    this.overridesText = JSON.stringify(next);
  }

  reset(): void {
    this.values = readDefaultValues();
    this.size = DEFAULT_RUN_SIZE;
    this.overridesText = '';
    this.unknownKeys = [];
  }
}
