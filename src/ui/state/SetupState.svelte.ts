/**
 * The run setup as reactive state: the form's raw text per field, the advanced config
 * overrides (JSON text, merged under the form: form fields win), their validation
 * through `resolveConfig`, and the query string that carries both in the URL. The mask
 * schedule and anchoring gate previews draw `effective`, the setup with any field in
 * error left at its default.
 */
import {
  FIELD_BY_KEY,
  SETUP_FIELDS,
  parseSetupQuery,
  readDefaultValues,
  serializeSetup,
  validateSetup,
  type FieldKey,
  type SetupValues,
} from '../runSetup';

export class SetupState {
  values = $state<SetupValues>(readDefaultValues());
  /** Advanced: a JSON object of config fields the form does not carry ('' = none). */
  overridesText = $state('');
  /** Query keys a link carried that the form does not know (shown, then dropped). */
  unknownKeys = $state<string[]>([]);

  validation = $derived(validateSetup(this.values, this.overridesText));
  /** What Train sends: the form's fields merged over the overrides. */
  configInput = $derived(this.validation.input);
  effective = $derived(this.validation.effective);
  isValid = $derived(this.validation.config !== null);
  queryString = $derived(serializeSetup(this.values, this.overridesText));
  /** True while every field holds its default text and there are no overrides. */
  isAllDefault = $derived(SETUP_FIELDS.every((f) => this.values[f.key] === f.defaultText) && this.overridesText.trim() === '');

  /** Restores the setup from a query string (`location.search`). */
  loadQuery(search: string): void {
    const { values, overridesText, unknownKeys } = parseSetupQuery(search);
    this.values = values;
    this.overridesText = overridesText;
    this.unknownKeys = unknownKeys;
  }

  set(key: FieldKey, text: string): void {
    this.values[key] = text;
  }

  setOverrides(text: string): void {
    this.overridesText = text;
  }

  errorOf(key: FieldKey): string | undefined {
    return this.validation.fieldErrors[key];
  }

  reset(): void {
    this.values = readDefaultValues();
    this.overridesText = '';
    this.unknownKeys = [];
  }

  isDefault(key: FieldKey): boolean {
    return this.values[key] === FIELD_BY_KEY[key].defaultText;
  }
}
