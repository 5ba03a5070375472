/**
 * A teaching panel's own values (the anchoring gates' q and seed, the mask schedule's λa,
 * S, T and schedules): moving them explores the method without touching the run setup or
 * the URL. A field not moved here shows the run's value; `applyToRun` copies the moved ones
 * into the run setup ("use these values in my run"), `revert` drops them. What the panel
 * draws is `effective`, and `fallbacks` names every value it draws at a default because the
 * value is in error, here or in the run setup, so a preview never hides a broken field.
 */
import { FIELD_BY_KEY, validateSetup, type FieldKey, type SetupValues } from '../runSetup';
import type { FieldSource, SetupState } from './SetupState.svelte';

/** A value a preview draws at its default, and why. */
export interface PreviewFallback {
  key: FieldKey;
  /** The field's name as the form writes it (its symbol when it has one). */
  name: string;
  /** Where the broken value is: this panel, or the run setup. */
  where: 'here' | 'run setup';
  error: string;
  /** The value drawn instead, as text. */
  drawn: string;
}

/** The values a config draws for a field (form text), read along the field's config path. */
function readDrawn(config: unknown, key: FieldKey): string {
  const v = FIELD_BY_KEY[key].path.reduce<unknown>(
    (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
    config,
  );
  return String(v);
}

export class TeachingState implements FieldSource {
  private readonly setup: SetupState;
  /** The fields this panel has knobs for. */
  readonly keys: readonly FieldKey[];
  /** The fields this panel uses from the run setup without a knob of its own (the gate grid's batch). */
  readonly readKeys: readonly FieldKey[];
  /** Values moved in this panel (the others follow the run setup). */
  own = $state<Partial<SetupValues>>({});

  values: SetupValues;
  validation: ReturnType<typeof validateSetup>;
  /** The config the panel draws: fields in error at their defaults. */
  effective: ReturnType<typeof validateSetup>['effective'];
  /** The panel's fields whose value differs from the run setup's. */
  changedKeys: FieldKey[];
  fallbacks: PreviewFallback[];

  constructor(setup: SetupState, keys: readonly FieldKey[], readKeys: readonly FieldKey[] = []) {
    this.setup = setup;
    this.keys = keys;
    this.readKeys = readKeys;
    this.values = $derived<SetupValues>({ ...this.setup.values, ...this.own });
    this.validation = $derived(validateSetup(this.values, this.setup.overridesText, { size: this.setup.size }));
    this.effective = $derived(this.validation.effective);
    this.changedKeys = $derived(
      this.keys.filter((k) => this.own[k] !== undefined && this.own[k] !== this.setup.values[k]),
    );
    this.fallbacks = $derived(this.listFallbacks());
  }

  set(key: FieldKey, text: string): void {
    this.own[key] = text;
  }

  errorOf(key: FieldKey): string | undefined {
    return this.validation.fieldErrors[key];
  }

  /** "Use these values in my run": the moved values go into the run setup (and its URL). */
  applyToRun(): void {
    const moved: Partial<SetupValues> = {};
    for (const k of this.changedKeys) moved[k] = this.own[k];
    this.setup.setMany(moved);
    this.own = {};
  }

  /** Back to the run's values. */
  revert(): void {
    this.own = {};
  }

  private listFallbacks(): PreviewFallback[] {
    const out: PreviewFallback[] = [];
    for (const key of [...this.keys, ...this.readKeys]) {
      const error = this.validation.fieldErrors[key];
      if (!error) continue;
      const field = FIELD_BY_KEY[key];
      const where = this.keys.includes(key) && this.own[key] !== undefined ? 'here' : 'run setup';
      out.push({ key, name: field.symbol ?? field.label, where, error, drawn: readDrawn(this.effective, key) });
    }
    return out;
  }
}
