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
 * The schemas and stubs: docs/envs.md.
 */
import type { ParamSchema, ToolImplementation, ToolSchema } from './types';
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

export interface ToolDef {
  name: string;
  family: string;
  /** The relation or computation this tool is a near-duplicate of, for distractors. */
  distractorOf?: string;
  schemas: Record<TaskLength, ToolSchema>;
  implementation: ToolImplementation;
}

export interface ToolCatalog {
  world: World;
  tools: Map<string, ToolDef>;
  relations: Relation[];
  /** Tool name → its near-duplicates (symmetric): the first distractors a task gets. */
  nearDuplicates: Map<string, string[]>;
}

/** The argument name of a lookup tool for each entity type. */
export const ENTITY_PARAM: Record<EntityType, string> = {
  person: 'person',
  city: 'city',
  country: 'country',
  org: 'organization',
};

const ENTITY_WORD: Record<EntityType, string> = {
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

const POPULATION_UNITS: UnitOption[] = [
  { unit: 'people', scale: 1, offset: 0, phraseSuffix: '' },
  { unit: 'thousands', scale: 0.001, offset: 0, phraseSuffix: ' in thousands' },
];
const ELEVATION_UNITS: UnitOption[] = [
  { unit: 'meters', scale: 1, offset: 0, phraseSuffix: ' in meters' },
  { unit: 'feet', scale: 3.28084, offset: 0, phraseSuffix: ' in feet' },
];
const TEMPERATURE_UNITS: UnitOption[] = [
  { unit: 'celsius', scale: 1, offset: 0, phraseSuffix: ' in degrees Celsius' },
  { unit: 'fahrenheit', scale: 1.8, offset: 32, phraseSuffix: ' in degrees Fahrenheit' },
];

/** The arithmetic every numeric stub applies (kept identical to the stub source). */
export function convertNumber(raw: number, option: UnitOption): number {
  return Math.round(raw * option.scale + option.offset);
}

/** The gold relations, one tool each. Distractor tools are described in DISTRACTORS. */
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

interface LookupSpec {
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
const LOOKUP_WORDING: Record<string, [string, string]> = {
  get_birthplace: [
    'City where a person was born.',
    'Look up the city where a person was born (their place of birth, not where they live now). Returns the city name.',
  ],
  get_residence: [
    'City where a person lives now.',
    'Look up the city where a person currently lives (their residence, which may differ from where they were born). Returns the city name.',
  ],
  get_employer: [
    'Organization a person works for now.',
    'Look up the organization that currently employs a person. Returns the organization name.',
  ],
  get_former_employer: [
    'Organization a person worked for before.',
    'Look up the organization that employed a person before their current job. Returns the organization name.',
  ],
  get_birth_year: [
    'Year a person was born.',
    'Look up the year in which a person was born. Returns a four-digit year.',
  ],
  get_birth_date: [
    'Date a person was born (YYYY-MM-DD).',
    'Look up the full date of birth of a person. Returns a date in YYYY-MM-DD format.',
  ],
  get_graduation_year: [
    'Year a person graduated.',
    'Look up the year in which a person graduated from university. Returns a four-digit year.',
  ],
  get_country_of_city: ['Country a city is in.', 'Look up the country in which a city lies. Returns the country name.'],
  get_neighbouring_country: [
    'A country bordering the country of a city.',
    'Look up a foreign country that borders the country in which a city lies. Returns the country name.',
  ],
  get_population: [
    'Population of a city.',
    'Look up the number of people living within the city limits of a city (not the metropolitan area).',
  ],
  get_metro_population: [
    'Population of the metropolitan area around a city.',
    'Look up the number of people living in the whole metropolitan area around a city, suburbs included.',
  ],
  get_elevation: ['Elevation of a city above sea level.', 'Look up the elevation of a city centre above sea level.'],
  get_average_temperature: [
    'Average yearly temperature of a city.',
    'Look up the average yearly air temperature measured in a city.',
  ],
  get_capital: [
    'Capital city of a country.',
    'Look up the capital city of a country (the seat of government, not necessarily the largest city). Returns the city name.',
  ],
  get_largest_city: [
    'Largest city of a country.',
    'Look up the most populous city of a country (not necessarily its capital). Returns the city name.',
  ],
  get_currency: ['Currency of a country.', 'Look up the official currency of a country. Returns the currency name.'],
  get_official_language: [
    'Official language of a country.',
    'Look up the official language spoken in a country. Returns the language name.',
  ],
  get_independence_year: [
    'Year a country became independent.',
    'Look up the year in which a country became independent. Returns a four-digit year.',
  ],
  get_constitution_year: [
    'Year a country adopted its constitution.',
    'Look up the year in which a country adopted its current constitution. Returns a four-digit year.',
  ],
  get_founder: [
    'Person who founded an organization.',
    'Look up the person who founded an organization (not its current chief executive). Returns the person name.',
  ],
  get_ceo: [
    'Current CEO of an organization.',
    'Look up the person who currently leads an organization as chief executive officer. Returns the person name.',
  ],
  get_headquarters: [
    'City of the headquarters of an organization.',
    'Look up the city where an organization has its headquarters. Returns the city name.',
  ],
  get_largest_office: [
    'City of the largest office of an organization.',
    'Look up the city where an organization has its largest office by head count (not necessarily its headquarters). Returns the city name.',
  ],
  get_founding_year: [
    'Year an organization was founded.',
    'Look up the year in which an organization was founded. Returns a four-digit year.',
  ],
  get_listing_year: [
    'Year an organization was listed on a stock exchange.',
    'Look up the year in which an organization was first listed on a stock exchange. Returns a four-digit year.',
  ],
};

function lookupSpecs(): LookupSpec[] {
  const specs: LookupSpec[] = [];
  const wording = (name: string): [string, string] => {
    const w = LOOKUP_WORDING[name];
    if (!w) throw new Error(`toolFamilies: no wording for tool "${name}"`);
    return w;
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

function makeSchema(
  name: string,
  description: string,
  properties: Record<string, ParamSchema>,
  required: string[],
): ToolSchema {
  const schema: ToolSchema = {
    type: 'function',
    function: { name, description, parameters: { type: 'object', properties, required } },
  };
  return deepFreeze(schema);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Extra optional arguments of the long wording: accepted and ignored by every lookup stub. */
const LONG_EXTRA_PARAMS: Record<string, ParamSchema> = {
  language: { type: 'string', description: 'Language of the returned names.', enum: ['en', 'fr', 'de'], default: 'en' },
  include_sources: {
    type: 'boolean',
    description: 'Whether to list the sources consulted (not shown in this version).',
    default: false,
  },
};

function buildLookupTool(world: World, spec: LookupSpec): ToolDef {
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

// ---------------------------------------------------------------------------------
// Computation tools (world-independent).

export const CALCULATOR_OPERATIONS = ['add', 'subtract', 'multiply', 'divide', 'max', 'min'] as const;
export type CalculatorOperation = (typeof CALCULATOR_OPERATIONS)[number];

/** Rounds to two decimals the way every computation stub does. */
export function roundTo2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The calculator stub's arithmetic, for the generator's answers. */
export function computeCalculator(operation: CalculatorOperation, numbers: number[]): number {
  let r = numbers[0];
  for (let i = 1; i < numbers.length; i++) {
    const x = numbers[i];
    if (operation === 'add') r += x;
    else if (operation === 'subtract') r -= x;
    else if (operation === 'multiply') r *= x;
    else if (operation === 'divide') r /= x;
    else if (operation === 'max') r = Math.max(r, x);
    else r = Math.min(r, x);
  }
  return roundTo2(r);
}

const CALCULATOR_SOURCE = `(args) => {
  const ops = ${JSON.stringify(CALCULATOR_OPERATIONS)};
  const op = args.operation;
  if (!ops.includes(op)) throw new Error('operation must be one of ' + ops.join(', '));
  const xs = args.numbers;
  if (!Array.isArray(xs) || xs.length === 0) throw new Error('numbers must be a non-empty array of numbers');
  for (const x of xs) if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error('numbers must hold finite numbers only');
  let r = xs[0];
  for (let i = 1; i < xs.length; i++) {
    const x = xs[i];
    if (op === 'add') r += x;
    else if (op === 'subtract') r -= x;
    else if (op === 'multiply') r *= x;
    else if (op === 'divide') { if (x === 0) throw new Error('division by zero'); r /= x; }
    else if (op === 'max') r = Math.max(r, x);
    else r = Math.min(r, x);
  }
  return { result: Math.round(r * 100) / 100 };
}`;

const STATISTICS_SOURCE = `(args) => {
  const measures = ['mean', 'median', 'range'];
  const m = args.measure === undefined ? 'mean' : args.measure;
  if (!measures.includes(m)) throw new Error('measure must be one of ' + measures.join(', '));
  const xs = args.numbers;
  if (!Array.isArray(xs) || xs.length === 0) throw new Error('numbers must be a non-empty array of numbers');
  for (const x of xs) if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error('numbers must hold finite numbers only');
  const s = xs.slice().sort((a, b) => a - b);
  let v;
  if (m === 'mean') v = s.reduce((a, b) => a + b, 0) / s.length;
  else if (m === 'median') v = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  else v = s[s.length - 1] - s[0];
  return { measure: m, value: Math.round(v * 100) / 100 };
}`;

export const DATE_UNITS = ['days', 'weeks', 'years'] as const;
export type DateUnit = (typeof DATE_UNITS)[number];

/** Milliseconds since the epoch of a YYYY-MM-DD date (UTC), or NaN. */
function parseIsoDate(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return NaN;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
}

/** The date_difference stub's arithmetic: |end − start| in whole days, weeks or years. */
export function computeDateDifference(start: string, end: string, unit: DateUnit): number {
  let a = start;
  let b = end;
  if (parseIsoDate(a) > parseIsoDate(b)) [a, b] = [b, a];
  const days = Math.round((parseIsoDate(b) - parseIsoDate(a)) / 86_400_000);
  if (unit === 'days') return days;
  if (unit === 'weeks') return Math.floor(days / 7);
  let years = Number(b.slice(0, 4)) - Number(a.slice(0, 4));
  if (b.slice(5) < a.slice(5)) years -= 1;
  return years;
}

const DATE_DIFFERENCE_SOURCE = `(args) => {
  const parse = (t) => {
    const m = typeof t === 'string' ? /^(\\d{4})-(\\d{2})-(\\d{2})$/.exec(t) : null;
    if (!m) throw new Error('dates must be strings in YYYY-MM-DD format; got ' + JSON.stringify(t));
    return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  };
  const units = ['days', 'weeks', 'years'];
  const unit = args.unit === undefined ? 'days' : args.unit;
  if (!units.includes(unit)) throw new Error('unit must be one of ' + units.join(', '));
  let a = args.start_date, b = args.end_date;
  if (parse(a) > parse(b)) { const t = a; a = b; b = t; }
  const days = Math.round((parse(b) - parse(a)) / 86400000);
  let difference;
  if (unit === 'days') difference = days;
  else if (unit === 'weeks') difference = Math.floor(days / 7);
  else { difference = Number(b.slice(0, 4)) - Number(a.slice(0, 4)); if (b.slice(5) < a.slice(5)) difference -= 1; }
  return { difference, unit };
}`;

const ADD_DAYS_SOURCE = `(args) => {
  const m = typeof args.date === 'string' ? /^(\\d{4})-(\\d{2})-(\\d{2})$/.exec(args.date) : null;
  if (!m) throw new Error('date must be a string in YYYY-MM-DD format');
  if (!Number.isInteger(args.days)) throw new Error('days must be an integer');
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + args.days));
  return { date: d.toISOString().slice(0, 10) };
}`;

export const LENGTH_UNITS = ['meters', 'feet', 'kilometers', 'miles'] as const;
export type LengthUnit = (typeof LENGTH_UNITS)[number];
/** Meters per unit. */
export const METERS_PER: Record<LengthUnit, number> = { meters: 1, feet: 0.3048, kilometers: 1000, miles: 1609.344 };

/** The convert_units stub's arithmetic. */
export function computeConvertUnits(value: number, from: LengthUnit, to: LengthUnit): number {
  return roundTo2((value * METERS_PER[from]) / METERS_PER[to]);
}

const CONVERT_UNITS_SOURCE = `(args) => {
  const per = ${JSON.stringify(METERS_PER)};
  if (typeof args.value !== 'number' || !Number.isFinite(args.value)) throw new Error('value must be a finite number');
  if (!Object.prototype.hasOwnProperty.call(per, args.from_unit)) throw new Error('from_unit must be one of ' + Object.keys(per).join(', '));
  if (!Object.prototype.hasOwnProperty.call(per, args.to_unit)) throw new Error('to_unit must be one of ' + Object.keys(per).join(', '));
  return { value: Math.round(args.value * per[args.from_unit] / per[args.to_unit] * 100) / 100, unit: args.to_unit };
}`;

const CONVERT_TEMPERATURE_SOURCE = `(args) => {
  const units = ['celsius', 'fahrenheit', 'kelvin'];
  if (typeof args.value !== 'number' || !Number.isFinite(args.value)) throw new Error('value must be a finite number');
  if (!units.includes(args.from_unit) || !units.includes(args.to_unit)) throw new Error('units must be one of ' + units.join(', '));
  let c = args.value;
  if (args.from_unit === 'fahrenheit') c = (c - 32) / 1.8;
  if (args.from_unit === 'kelvin') c = c - 273.15;
  let v = c;
  if (args.to_unit === 'fahrenheit') v = c * 1.8 + 32;
  if (args.to_unit === 'kelvin') v = c + 273.15;
  return { value: Math.round(v * 100) / 100, unit: args.to_unit };
}`;

function buildComputeTools(): ToolDef[] {
  const numbers: ParamSchema = { type: 'array', items: { type: 'number' } };
  const js = (source: string): ToolImplementation => deepFreeze({ language: 'javascript', source });
  return [
    {
      name: 'calculator',
      family: 'calculator',
      schemas: {
        short: makeSchema(
          'calculator',
          'Apply an arithmetic operation to a list of numbers, left to right.',
          {
            operation: { type: 'string', enum: [...CALCULATOR_OPERATIONS] },
            numbers,
          },
          ['operation', 'numbers'],
        ),
        long: makeSchema(
          'calculator',
          'Apply one arithmetic operation to a list of numbers, from left to right (subtract: first minus the rest; max/min: the largest/smallest). The result is rounded to two decimals.',
          {
            operation: { type: 'string', description: 'The operation to apply.', enum: [...CALCULATOR_OPERATIONS] },
            numbers: { ...numbers, description: 'The operands, in order.' },
          },
          ['operation', 'numbers'],
        ),
      },
      implementation: js(CALCULATOR_SOURCE),
    },
    {
      name: 'statistics_calculator',
      family: 'calculator',
      distractorOf: 'calculator',
      schemas: {
        short: makeSchema(
          'statistics_calculator',
          'Compute a summary statistic of a list of numbers.',
          {
            measure: { type: 'string', enum: ['mean', 'median', 'range'], default: 'mean' },
            numbers,
          },
          ['numbers'],
        ),
        long: makeSchema(
          'statistics_calculator',
          'Compute a summary statistic (mean, median or range) of a list of numbers, rounded to two decimals.',
          {
            measure: {
              type: 'string',
              description: 'The statistic. Default: mean.',
              enum: ['mean', 'median', 'range'],
              default: 'mean',
            },
            numbers: { ...numbers, description: 'The sample.' },
          },
          ['numbers'],
        ),
      },
      implementation: js(STATISTICS_SOURCE),
    },
    {
      name: 'date_difference',
      family: 'date_difference',
      schemas: {
        short: makeSchema(
          'date_difference',
          'Time between two dates (YYYY-MM-DD).',
          {
            start_date: { type: 'string' },
            end_date: { type: 'string' },
            unit: { type: 'string', enum: [...DATE_UNITS], default: 'days' },
          },
          ['start_date', 'end_date'],
        ),
        long: makeSchema(
          'date_difference',
          'Compute the time between two dates given as YYYY-MM-DD, in whole days, weeks or years (order does not matter).',
          {
            start_date: { type: 'string', description: 'The first date, YYYY-MM-DD.' },
            end_date: { type: 'string', description: 'The second date, YYYY-MM-DD.' },
            unit: {
              type: 'string',
              description: 'Unit of the result. Default: days.',
              enum: [...DATE_UNITS],
              default: 'days',
            },
          },
          ['start_date', 'end_date'],
        ),
      },
      implementation: js(DATE_DIFFERENCE_SOURCE),
    },
    {
      name: 'add_days_to_date',
      family: 'date_difference',
      distractorOf: 'date_difference',
      schemas: {
        short: makeSchema(
          'add_days_to_date',
          'Date a number of days after a date (YYYY-MM-DD).',
          {
            date: { type: 'string' },
            days: { type: 'integer' },
          },
          ['date', 'days'],
        ),
        long: makeSchema(
          'add_days_to_date',
          'Compute the date that falls a given number of days after (or before, if negative) a date given as YYYY-MM-DD.',
          {
            date: { type: 'string', description: 'The start date, YYYY-MM-DD.' },
            days: { type: 'integer', description: 'Days to add (negative to go back).' },
          },
          ['date', 'days'],
        ),
      },
      implementation: js(ADD_DAYS_SOURCE),
    },
    {
      name: 'convert_units',
      family: 'convert_units',
      schemas: {
        short: makeSchema(
          'convert_units',
          'Convert a length between units.',
          {
            value: { type: 'number' },
            from_unit: { type: 'string', enum: [...LENGTH_UNITS] },
            to_unit: { type: 'string', enum: [...LENGTH_UNITS] },
          },
          ['value', 'from_unit', 'to_unit'],
        ),
        long: makeSchema(
          'convert_units',
          'Convert a length or distance from one unit to another, rounded to two decimals.',
          {
            value: { type: 'number', description: 'The length to convert.' },
            from_unit: { type: 'string', description: 'Unit of the value.', enum: [...LENGTH_UNITS] },
            to_unit: { type: 'string', description: 'Unit wanted.', enum: [...LENGTH_UNITS] },
          },
          ['value', 'from_unit', 'to_unit'],
        ),
      },
      implementation: js(CONVERT_UNITS_SOURCE),
    },
    {
      name: 'convert_temperature',
      family: 'convert_units',
      distractorOf: 'convert_units',
      schemas: {
        short: makeSchema(
          'convert_temperature',
          'Convert a temperature between units.',
          {
            value: { type: 'number' },
            from_unit: { type: 'string', enum: ['celsius', 'fahrenheit', 'kelvin'] },
            to_unit: { type: 'string', enum: ['celsius', 'fahrenheit', 'kelvin'] },
          },
          ['value', 'from_unit', 'to_unit'],
        ),
        long: makeSchema(
          'convert_temperature',
          'Convert a temperature from one scale to another, rounded to two decimals.',
          {
            value: { type: 'number', description: 'The temperature to convert.' },
            from_unit: {
              type: 'string',
              description: 'Scale of the value.',
              enum: ['celsius', 'fahrenheit', 'kelvin'],
            },
            to_unit: { type: 'string', description: 'Scale wanted.', enum: ['celsius', 'fahrenheit', 'kelvin'] },
          },
          ['value', 'from_unit', 'to_unit'],
        ),
      },
      implementation: js(CONVERT_TEMPERATURE_SOURCE),
    },
  ];
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
