/**
 * The run setup as reactive state: the form's raw text per field, its validation
 * through `resolveConfig`, and the query string that carries it in the URL. The mask
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
  /** Query keys a link carried that the form does not know (shown, then dropped). */
  unknownKeys = $state<string[]>([]);

  validation = $derived(validateSetup(this.values));
  effective = $derived(this.validation.effective);
  isValid = $derived(this.validation.config !== null);
  queryString = $derived(serializeSetup(this.values));
  /** True while every field holds its default text. */
  isAllDefault = $derived(SETUP_FIELDS.every((f) => this.values[f.key] === f.defaultText));

  /** Restores the setup from a query string (`location.search`). */
  loadQuery(search: string): void {
    const { values, unknownKeys } = parseSetupQuery(search);
    this.values = values;
    this.unknownKeys = unknownKeys;
  }

  set(key: FieldKey, text: string): void {
    this.values[key] = text;
  }

  errorOf(key: FieldKey): string | undefined {
    return this.validation.fieldErrors[key];
  }

  reset(): void {
    this.values = readDefaultValues();
    this.unknownKeys = [];
  }

  isDefault(key: FieldKey): boolean {
    return this.values[key] === FIELD_BY_KEY[key].defaultText;
  }
}
