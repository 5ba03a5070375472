/**
 * The run setup as reactive state: the form's raw text per field, the run size (runSizes.ts),
 * the advanced config overrides (JSON text, merged over the size: form fields win over
 * both), a picked Qwen3 folder, their validation through `resolveConfig`, and the query
 * string that carries all but the folder in the URL. Only Run setup edits it; the teaching
 * panels keep their own values (TeachingState) and copy them here on request.
 */
import type { PickedModelFolder } from '../modelFolder';
import {
  SETUP_FIELDS,
  parseSetupQuery,
  readAppDefault,
  readDefaultValues,
  serializeSetup,
  validateSetup,
  type FieldKey,
  type SetupValues,
} from '../runSetup';
import { DEFAULT_RUN_SIZE, RUN_SIZES, type RunSizeId } from '../runSizes';
import { describeLockedField, type ChoiceKey } from '../setupChoices';

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

  validation = $derived(
    validateSetup(this.values, this.overridesText, {
      size: this.size,
      modelFolderName: this.modelFolder?.name ?? null,
    }),
  );
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
    return key === 'model' || key === 'init' || key === 'tasks' ? this.validation.unavailable[key as ChoiceKey] : {};
  }

  lockedReasonOf(key: FieldKey): string | null {
    return describeLockedField(key, { modelFolderName: this.modelFolder?.name ?? null });
  }

  defaultOf(key: FieldKey): string {
    return readAppDefault(key);
  }

  reset(): void {
    this.values = readDefaultValues();
    this.size = DEFAULT_RUN_SIZE;
    this.overridesText = '';
    this.unknownKeys = [];
  }
}
