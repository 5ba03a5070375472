/**
 * The relations of a generated world (`world.ts`) that lookup tools answer: the entity and
 * value kinds, each relation's question phrase and result field, and the unit options of the
 * numeric ones (data/lookupUnits.json). `convertNumber` is the arithmetic every numeric
 * lookup stub applies. The tools themselves: lookupTools.ts; the catalog: toolFamilies.ts.
 */
import lookupUnits from './data/lookupUnits.json' with { type: 'json' };
import type { World } from './world';

export type EntityType = 'person' | 'city' | 'country' | 'org';
export type ValueKind = 'number' | 'date' | 'text';
export type TaskLength = 'short' | 'long';

/** A unit choice of a numeric lookup: value = Math.round(raw · scale + offset). */
export interface UnitOption {
  unit: string;
  scale: number;
  offset: number;
  /** Text appended to the phrase when the question asks for this unit ('' for the default). */
  phraseSuffix: string;
}

export interface Relation {
  id: string;
  /** The tool that answers this relation. */
  tool: string;
  /** Its near-duplicate distractor. */
  distractor: string;
  from: EntityType;
  to: EntityType | ValueKind;
  /** Question phrase, `{x}` standing for the subject. */
  phrase: string;
  /** The key of the stub's result object holding the answer. */
  field: string;
  /** Entity index (when `to` is an entity type) or the raw value. */
  read(world: World, index: number): number | string;
  /** Unit options of a numeric relation; the first is the default. */
  units?: UnitOption[];
}

/** The argument name of a lookup tool for each entity type. */
export const ENTITY_PARAM: Record<EntityType, string> = {
  person: 'person',
  city: 'city',
  country: 'country',
  org: 'organization',
};

/** The word for each entity type in descriptions and errors. */
export const ENTITY_WORD: Record<EntityType, string> = {
  person: 'person',
  city: 'city',
  country: 'country',
  org: 'organization',
};

export function entityName(world: World, type: EntityType, index: number): string {
  switch (type) {
    case 'person':
      return world.people[index].name;
    case 'city':
      return world.cities[index].name;
    case 'country':
      return world.countries[index].name;
    case 'org':
      return world.orgs[index].name;
  }
}

export function entityCount(world: World, type: EntityType): number {
  switch (type) {
    case 'person':
      return world.people.length;
    case 'city':
      return world.cities.length;
    case 'country':
      return world.countries.length;
    case 'org':
      return world.orgs.length;
  }
}

export function isEntityType(kind: string): kind is EntityType {
  return kind === 'person' || kind === 'city' || kind === 'country' || kind === 'org';
}

/** Unit options of the numeric relations (the first of each is the default). */
export const POPULATION_UNITS: UnitOption[] = lookupUnits.population;
const ELEVATION_UNITS: UnitOption[] = lookupUnits.elevation;
export const TEMPERATURE_UNITS: UnitOption[] = lookupUnits.temperature;

/** The arithmetic every numeric stub applies (kept identical to the stub source). */
export function convertNumber(raw: number, option: UnitOption): number {
  return Math.round(raw * option.scale + option.offset);
}

/** The gold relations, one tool each. Their distractor tools: lookupTools.ts. */
export const RELATIONS: Relation[] = [
  {
    id: 'birthplace',
    tool: 'get_birthplace',
    distractor: 'get_residence',
    from: 'person',
    to: 'city',
    phrase: 'the birthplace of {x}',
    field: 'birthplace',
    read: (w, i) => w.people[i].birthplace,
  },
  {
    id: 'employer',
    tool: 'get_employer',
    distractor: 'get_former_employer',
    from: 'person',
    to: 'org',
    phrase: 'the employer of {x}',
    field: 'employer',
    read: (w, i) => w.people[i].employer,
  },
  {
    id: 'birth_year',
    tool: 'get_birth_year',
    distractor: 'get_graduation_year',
    from: 'person',
    to: 'number',
    phrase: 'the birth year of {x}',
    field: 'birth_year',
    read: (w, i) => w.people[i].birthYear,
  },
  {
    id: 'birth_date',
    tool: 'get_birth_date',
    distractor: 'get_graduation_year',
    from: 'person',
    to: 'date',
    phrase: 'the birth date of {x}',
    field: 'birth_date',
    read: (w, i) => w.people[i].birthDate,
  },
  {
    id: 'city_country',
    tool: 'get_country_of_city',
    distractor: 'get_neighbouring_country',
    from: 'city',
    to: 'country',
    phrase: 'the country of {x}',
    field: 'country',
    read: (w, i) => w.cities[i].country,
  },
  {
    id: 'population',
    tool: 'get_population',
    distractor: 'get_metro_population',
    from: 'city',
    to: 'number',
    phrase: 'the population of {x}',
    field: 'population',
    read: (w, i) => w.cities[i].population,
    units: POPULATION_UNITS,
  },
  {
    id: 'elevation',
    tool: 'get_elevation',
    distractor: 'get_average_temperature',
    from: 'city',
    to: 'number',
    phrase: 'the elevation of {x}',
    field: 'elevation',
    read: (w, i) => w.cities[i].elevationMeters,
    units: ELEVATION_UNITS,
  },
  {
    id: 'capital',
    tool: 'get_capital',
    distractor: 'get_largest_city',
    from: 'country',
    to: 'city',
    phrase: 'the capital of {x}',
    field: 'capital',
    read: (w, i) => w.countries[i].capital,
  },
  {
    id: 'currency',
    tool: 'get_currency',
    distractor: 'get_official_language',
    from: 'country',
    to: 'text',
    phrase: 'the currency of {x}',
    field: 'currency',
    read: (w, i) => w.countries[i].currency,
  },
  {
    id: 'independence_year',
    tool: 'get_independence_year',
    distractor: 'get_constitution_year',
    from: 'country',
    to: 'number',
    phrase: 'the independence year of {x}',
    field: 'independence_year',
    read: (w, i) => w.countries[i].independenceYear,
  },
  {
    id: 'founder',
    tool: 'get_founder',
    distractor: 'get_ceo',
    from: 'org',
    to: 'person',
    phrase: 'the founder of {x}',
    field: 'founder',
    read: (w, i) => w.orgs[i].founder,
  },
  {
    id: 'headquarters',
    tool: 'get_headquarters',
    distractor: 'get_largest_office',
    from: 'org',
    to: 'city',
    phrase: 'the headquarters city of {x}',
    field: 'headquarters',
    read: (w, i) => w.orgs[i].headquarters,
  },
  {
    id: 'founding_year',
    tool: 'get_founding_year',
    distractor: 'get_listing_year',
    from: 'org',
    to: 'number',
    phrase: 'the founding year of {x}',
    field: 'founding_year',
    read: (w, i) => w.orgs[i].foundingYear,
  },
];
