/**
 * Tool families over a generated world: each relation of
 * `world.ts` is a lookup tool, paired with a near-duplicate distractor (similar name
 * and description, different semantics: residence vs birthplace, CEO vs founder, …),
 * plus computation tools (calculator, date difference, unit conversion) with their own
 * distractors. Optional arguments carry enums and defaults (population in thousands,
 * elevation in feet, date difference in weeks).
 *
 * Simplification: numeric conversions round to integers (lookups) or to two decimals
 * (computations); `convertNumber` mirrors the stubs' arithmetic exactly so that the
 * generator's answers equal the stubs' outputs (checked by replaying gold calls).
 *
 * This file builds the catalog and is the families' index: the relations live in
 * toolRelations.ts, the lookup tools in lookupTools.ts (wording: data/*.json), the
 * computation tools in computeTools.ts (arithmetic: computeArithmetic.ts, stubs:
 * computeToolSources.ts). The schemas and stubs: docs/envs.md.
 */
import { buildComputeTools } from './computeTools';
import { buildLookupTool, lookupSpecs } from './lookupTools';
import type { ToolDef } from './toolDefs';
import { RELATIONS, type Relation } from './toolRelations';
import type { World } from './world';

export {
  CALCULATOR_OPERATIONS,
  DATE_UNITS,
  LENGTH_UNITS,
  METERS_PER,
  computeCalculator,
  computeConvertUnits,
  computeDateDifference,
  roundTo2,
  type CalculatorOperation,
  type DateUnit,
  type LengthUnit,
} from './computeArithmetic';
export type { ToolDef } from './toolDefs';
export {
  ENTITY_PARAM,
  RELATIONS,
  convertNumber,
  entityCount,
  entityName,
  isEntityType,
  type EntityType,
  type Relation,
  type TaskLength,
  type UnitOption,
  type ValueKind,
} from './toolRelations';

export interface ToolCatalog {
  world: World;
  tools: Map<string, ToolDef>;
  relations: Relation[];
  /** Tool name → its near-duplicates (symmetric): the first distractors a task gets. */
  nearDuplicates: Map<string, string[]>;
}

/** Builds every tool of a world once; tasks share these (frozen) schemas and sources. */
export function buildToolCatalog(world: World): ToolCatalog {
  const tools = new Map<string, ToolDef>();
  for (const spec of lookupSpecs()) tools.set(spec.name, buildLookupTool(world, spec));
  for (const def of buildComputeTools()) tools.set(def.name, def);
  const nearDuplicates = new Map<string, string[]>();
  const link = (a: string, b: string) => {
    for (const [x, y] of [
      [a, b],
      [b, a],
    ]) {
      const list = nearDuplicates.get(x) ?? [];
      if (!list.includes(y)) list.push(y);
      nearDuplicates.set(x, list);
    }
  };
  for (const def of tools.values()) if (def.distractorOf) link(def.name, def.distractorOf);
  for (const r of RELATIONS) link(r.tool, r.distractor);
  return { world, tools, relations: RELATIONS, nearDuplicates };
}
