/**
 * Registries by name (after verl's `register_adv_est`): advantage estimators, loss
 * aggregation modes, SFT schedules… are registered under a name, and an unknown name fails
 * listing the valid ones. A registry is the only list of its names: the training config's
 * enums are built from `names()` (`registryEnum`, src/recipes/config.ts), and the UI's
 * dropdowns from the config.
 */

export interface Registry<T> {
  /** What the registry holds, for error messages ("advantage estimator"). */
  readonly what: string;
  register(name: string, value: T): void;
  /** The value registered under `name`; throws naming the valid names otherwise. */
  get(name: string): T;
  has(name: string): boolean;
  /** Registered names, in registration order. */
  names(): string[];
}

export function createRegistry<T>(what: string): Registry<T> {
  const entries = new Map<string, T>();
  return {
    what,
    register(name, value) {
      if (typeof name !== 'string' || name.length === 0) throw new Error(`${what} name must be a non-empty string`);
      if (entries.has(name)) throw new Error(`${what} "${name}" is registered twice`);
      entries.set(name, value);
    },
    get(name) {
      const value = entries.get(name);
      if (value === undefined) {
        throw new Error(`unknown ${what} "${name}"; valid: ${[...entries.keys()].join(', ')}`);
      }
      return value;
    },
    has(name) {
      return entries.has(name);
    },
    names() {
      return [...entries.keys()];
    },
  };
}
