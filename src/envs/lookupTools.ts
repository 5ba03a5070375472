/**
 * The lookup tools of a world: one per relation (toolRelations.ts) and one near-duplicate
 * distractor each (residence vs birthplace, CEO vs founder, …), worded short and long
 * (data/lookupWording.json; the long wording adds data/lookupLongExtraParams.json), each
 * with a JavaScript stub that holds the world's table and applies the unit arithmetic of
 * `convertNumber`.
 */
import lookupLongExtraParams from './data/lookupLongExtraParams.json' with { type: 'json' };
import lookupWording from './data/lookupWording.json' with { type: 'json' };
import { deepFreeze, makeSchema, type ToolDef } from './toolDefs';
import {
  ENTITY_PARAM,
  ENTITY_WORD,
  POPULATION_UNITS,
  RELATIONS,
  TEMPERATURE_UNITS,
  entityCount,
  entityName,
  isEntityType,
  type EntityType,
  type UnitOption,
  type ValueKind,
} from './toolRelations';
import type { ParamSchema } from './types';
import type { World } from './world';

export interface LookupSpec {
  name: string;
  family: string;
  distractorOf?: string;
  from: EntityType;
  to: EntityType | ValueKind;
  field: string;
  read(world: World, index: number): number | string;
  units?: UnitOption[];
  short: string;
  long: string;
}

/** Wording of each lookup tool, gold and distractor: [short, long]. */
const LOOKUP_WORDING: Readonly<Record<string, readonly string[]>> = lookupWording;

/** The lookup tools of every relation, gold and distractor, in catalog order. */
export function lookupSpecs(): LookupSpec[] {
  const specs: LookupSpec[] = [];
  const wording = (name: string): [string, string] => {
    const w = LOOKUP_WORDING[name];
    if (!w) throw new Error(`toolFamilies: no wording for tool "${name}"`);
    return [w[0], w[1]];
  };
  for (const r of RELATIONS) {
    const [short, long] = wording(r.tool);
    specs.push({
      name: r.tool,
      family: r.id,
      from: r.from,
      to: r.to,
      field: r.field,
      read: r.read,
      units: r.units,
      short,
      long,
    });
  }
  const distractors: Omit<LookupSpec, 'short' | 'long'>[] = [
    {
      name: 'get_residence',
      family: 'birthplace',
      distractorOf: 'get_birthplace',
      from: 'person',
      to: 'city',
      field: 'residence',
      read: (w, i) => w.people[i].residence,
    },
    {
      name: 'get_former_employer',
      family: 'employer',
      distractorOf: 'get_employer',
      from: 'person',
      to: 'org',
      field: 'former_employer',
      read: (w, i) => w.people[i].formerEmployer,
    },
    {
      name: 'get_graduation_year',
      family: 'birth_year',
      distractorOf: 'get_birth_year',
      from: 'person',
      to: 'number',
      field: 'graduation_year',
      read: (w, i) => w.people[i].graduationYear,
    },
    {
      name: 'get_neighbouring_country',
      family: 'city_country',
      distractorOf: 'get_country_of_city',
      from: 'city',
      to: 'country',
      field: 'neighbouring_country',
      read: (w, i) => w.countries[w.cities[i].country].neighbour,
    },
    {
      name: 'get_metro_population',
      family: 'population',
      distractorOf: 'get_population',
      from: 'city',
      to: 'number',
      field: 'metro_population',
      read: (w, i) => w.cities[i].metroPopulation,
      units: POPULATION_UNITS,
    },
    {
      name: 'get_average_temperature',
      family: 'elevation',
      distractorOf: 'get_elevation',
      from: 'city',
      to: 'number',
      field: 'average_temperature',
      read: (w, i) => w.cities[i].averageTempCelsius,
      units: TEMPERATURE_UNITS,
    },
    {
      name: 'get_largest_city',
      family: 'capital',
      distractorOf: 'get_capital',
      from: 'country',
      to: 'city',
      field: 'largest_city',
      read: (w, i) => w.countries[i].largestCity,
    },
    {
      name: 'get_official_language',
      family: 'currency',
      distractorOf: 'get_currency',
      from: 'country',
      to: 'text',
      field: 'language',
      read: (w, i) => w.countries[i].language,
    },
    {
      name: 'get_constitution_year',
      family: 'independence_year',
      distractorOf: 'get_independence_year',
      from: 'country',
      to: 'number',
      field: 'constitution_year',
      read: (w, i) => w.countries[i].constitutionYear,
    },
    {
      name: 'get_ceo',
      family: 'founder',
      distractorOf: 'get_founder',
      from: 'org',
      to: 'person',
      field: 'ceo',
      read: (w, i) => w.orgs[i].ceo,
    },
    {
      name: 'get_largest_office',
      family: 'headquarters',
      distractorOf: 'get_headquarters',
      from: 'org',
      to: 'city',
      field: 'largest_office',
      read: (w, i) => w.orgs[i].largestOffice,
    },
    {
      name: 'get_listing_year',
      family: 'founding_year',
      distractorOf: 'get_founding_year',
      from: 'org',
      to: 'number',
      field: 'listing_year',
      read: (w, i) => w.orgs[i].listingYear,
    },
  ];
  for (const d of distractors) {
    const [short, long] = wording(d.name);
    specs.push({ ...d, short, long });
  }
  return specs;
}

/** Extra optional arguments of the long wording: accepted and ignored by every lookup stub. */
const LONG_EXTRA_PARAMS = lookupLongExtraParams as Record<string, ParamSchema>;

/** A lookup tool over the world's table for its relation: both schemas and the stub. */
export function buildLookupTool(world: World, spec: LookupSpec): ToolDef {
  const param = ENTITY_PARAM[spec.from];
  const word = ENTITY_WORD[spec.from];
  const count = entityCount(world, spec.from);
  const entries: [string, number | string][] = [];
  for (let i = 0; i < count; i++) {
    const raw = spec.read(world, i);
    const value = isEntityType(spec.to) ? entityName(world, spec.to, raw as number) : raw;
    entries.push([entityName(world, spec.from, i).toLowerCase(), value]);
  }
  const shortProps: Record<string, ParamSchema> = {
    [param]: { type: 'string', description: `Full name of the ${word}.` },
  };
  if (spec.units) {
    shortProps.unit = { type: 'string', enum: spec.units.map((u) => u.unit), default: spec.units[0].unit };
  }
  const longProps: Record<string, ParamSchema> = {
    [param]: {
      type: 'string',
      description: `The full name of the ${word}, exactly as written (case does not matter).`,
    },
  };
  if (spec.units) {
    longProps.unit = {
      type: 'string',
      description: `Unit of the returned number. Default: ${spec.units[0].unit}.`,
      enum: spec.units.map((u) => u.unit),
      default: spec.units[0].unit,
    };
  }
  Object.assign(longProps, LONG_EXTRA_PARAMS);
  const unitsJson = spec.units ? JSON.stringify(spec.units.map((u) => [u.unit, u.scale, u.offset])) : 'null';
  const source = `(args) => {
  const table = new Map(${JSON.stringify(entries)});
  const units = ${unitsJson};
  const key = args[${JSON.stringify(param)}];
  if (typeof key !== 'string') throw new Error(${JSON.stringify(`"${param}" must be a string`)});
  let value = table.get(key.trim().toLowerCase());
  if (value === undefined) throw new Error(${JSON.stringify(`no ${word} named `)} + JSON.stringify(key));
  const out = {};
  out[${JSON.stringify(param)}] = key.trim();
  if (units) {
    const unit = args.unit === undefined ? units[0][0] : args.unit;
    const option = units.find((u) => u[0] === unit);
    if (!option) throw new Error('unit must be one of ' + units.map((u) => u[0]).join(', ') + '; got ' + JSON.stringify(unit));
    value = Math.round(value * option[1] + option[2]);
    out[${JSON.stringify(spec.field)}] = value;
    out.unit = unit;
  } else {
    out[${JSON.stringify(spec.field)}] = value;
  }
  return out;
}`;
  return {
    name: spec.name,
    family: spec.family,
    distractorOf: spec.distractorOf,
    schemas: {
      short: makeSchema(spec.name, spec.short, shortProps, [param]),
      long: makeSchema(spec.name, spec.long, longProps, [param]),
    },
    implementation: deepFreeze({ language: 'javascript', source }),
  };
}
