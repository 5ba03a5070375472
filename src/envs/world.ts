/**
 * A small seeded world for the built-in tasks: people,
 * cities, countries and organisations with the relations the tool families look up
 * (person → birthplace, residence, employer, birth date; city → country, population,
 * elevation; organisation → founder, CEO, headquarters, founding year; country →
 * capital, currency, independence year).
 *
 * Simplifications: the world is fictional and small (tens of entities); values are
 * drawn independently except where consistency is cheap (a founder is born at least
 * 22 years before the founding, the capital is never the largest city).
 *
 * Why train and test worlds never share a name: docs/envs.md.
 */
import { createRng, hashCyrb128, type Rng } from '../core/rng';

export type WorldSplit = 'train' | 'test';

export interface Person {
  name: string;
  birthplace: number; // city index
  residence: number; // city index, ≠ birthplace
  employer: number; // org index
  formerEmployer: number; // org index, ≠ employer
  birthDate: string; // YYYY-MM-DD
  birthYear: number;
  graduationYear: number;
}

export interface City {
  name: string;
  country: number; // country index
  population: number;
  metroPopulation: number;
  elevationMeters: number;
  averageTempCelsius: number;
}

export interface Country {
  name: string;
  capital: number; // city index
  largestCity: number; // city index, ≠ capital
  neighbour: number; // country index, ≠ itself
  currency: string;
  language: string;
  independenceYear: number;
  constitutionYear: number;
}

export interface Organisation {
  name: string;
  founder: number; // person index
  ceo: number; // person index, ≠ founder
  headquarters: number; // city index
  largestOffice: number; // city index, ≠ headquarters
  foundingYear: number;
  listingYear: number;
}

export interface World {
  seed: number;
  split: WorldSplit;
  people: Person[];
  cities: City[];
  countries: Country[];
  orgs: Organisation[];
}

export interface WorldSize {
  people: number;
  cities: number;
  countries: number;
  orgs: number;
}

export const DEFAULT_WORLD_SIZE: WorldSize = { people: 24, cities: 16, countries: 6, orgs: 12 };

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ra',
  've',
  'to',
  'sa',
  'ne',
  'ri',
  'do',
  'lu',
  'fe',
  'ba',
  'zo',
  'pe',
  'ti',
  'mar',
  'tel',
  'vin',
  'sor',
  'dan',
  'kel',
  'bri',
  'hal',
  'nor',
  'es',
  'an',
  'or',
  'il',
  'qua',
  'jo',
  'wen',
];
const CITY_SUFFIXES = ['ton', 'ford', 'ville', 'burg', 'port', 'mere', 'dale', 'wick'];
const ORG_SUFFIXES = ['Labs', 'Group', 'Works', 'Systems', 'Foods', 'Motors', 'Media', 'Energy'];
const CURRENCY_SUFFIXES = ['crown', 'mark', 'dinar', 'florin'];
const LANGUAGE_SUFFIXES = ['ish', 'ese', 'ic', 'an'];

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function drawWord(rng: Rng, minSyllables: number, maxSyllables: number): string {
  const count = minSyllables + rng.int(maxSyllables - minSyllables + 1);
  let word = '';
  for (let i = 0; i < count; i++) word += SYLLABLES[rng.int(SYLLABLES.length)];
  return capitalise(word);
}

/** The split a name belongs to: the parity of its cyrb128 hash. */
export function splitOfName(name: string): WorldSplit {
  return (hashCyrb128(name)[0] & 1) === 0 ? 'train' : 'test';
}

/** Draws names from `draw` until one is new and belongs to `split`. */
function drawUniqueName(rng: Rng, used: Set<string>, split: WorldSplit, draw: (r: Rng) => string): string {
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const name = draw(rng);
    if (!used.has(name) && splitOfName(name) === split) {
      used.add(name);
      return name;
    }
  }
  throw new Error(
    `world: could not draw a new ${split} name after 10000 attempts (world too large for the syllable set)`,
  );
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function drawDate(rng: Rng, year: number): string {
  const month = 1 + rng.int(12);
  const day = 1 + rng.int(DAYS_IN_MONTH[month - 1]);
  return `${year}-${pad2(month)}-${pad2(day)}`;
}

/** An index in [0, n) different from `avoid` (n ≥ 2). */
function drawOther(rng: Rng, n: number, avoid: number): number {
  const k = rng.int(n - 1);
  return k >= avoid ? k + 1 : k;
}

/**
 * Generates the world of `seed` for `split`. Same (seed, split) → identical world.
 */
export function generateWorld(seed: number, split: WorldSplit = 'train', size: WorldSize = DEFAULT_WORLD_SIZE): World {
  if (split !== 'train' && split !== 'test')
    throw new Error(`generateWorld: split must be "train" or "test", got ${String(split)}`);
  if (size.countries < 2 || size.cities < 2 * size.countries || size.people < 2 || size.orgs < 2) {
    throw new Error('generateWorld: need ≥2 countries, ≥2 cities per country, ≥2 people and ≥2 organisations');
  }
  const rng = createRng(`world/${split}/${seed}`);
  const names = rng.split('names');
  const used = new Set<string>();

  const countries: Country[] = [];
  for (let i = 0; i < size.countries; i++) {
    const name = drawUniqueName(names, used, split, (r) => drawWord(r, 2, 3));
    const stem = drawUniqueName(names, used, split, (r) => drawWord(r, 1, 2));
    const currency = `${stem} ${CURRENCY_SUFFIXES[i % CURRENCY_SUFFIXES.length]}`;
    const language = drawUniqueName(
      names,
      used,
      split,
      (r) => drawWord(r, 1, 2) + LANGUAGE_SUFFIXES[r.int(LANGUAGE_SUFFIXES.length)],
    );
    const independenceYear = 1700 + rng.int(280);
    countries.push({
      name,
      capital: -1,
      largestCity: -1,
      neighbour: drawOther(rng, size.countries, i),
      currency,
      language,
      independenceYear,
      constitutionYear: independenceYear + 1 + rng.int(40),
    });
  }

  const cities: City[] = [];
  for (let i = 0; i < size.cities; i++) {
    const name = drawUniqueName(
      names,
      used,
      split,
      (r) => drawWord(r, 1, 2) + CITY_SUFFIXES[r.int(CITY_SUFFIXES.length)],
    );
    // Every country gets at least two cities: the first 2·countries cities are dealt round-robin.
    const country = i < 2 * size.countries ? i % size.countries : rng.int(size.countries);
    const population = 20_000 + rng.int(3_000_000);
    cities.push({
      name,
      country,
      population,
      metroPopulation: population + 10_000 + rng.int(2_000_000),
      elevationMeters: rng.int(2_500),
      averageTempCelsius: -5 + rng.int(30),
    });
  }
  for (let c = 0; c < countries.length; c++) {
    const own = cities.map((city, index) => ({ city, index })).filter((x) => x.city.country === c);
    let largest = own[0];
    for (const x of own) if (x.city.population > largest.city.population) largest = x;
    const others = own.filter((x) => x.index !== largest.index);
    countries[c].largestCity = largest.index;
    countries[c].capital = others[rng.int(others.length)].index;
  }

  const people: Person[] = [];
  for (let i = 0; i < size.people; i++) {
    const name = drawUniqueName(names, used, split, (r) => `${drawWord(r, 1, 2)} ${drawWord(r, 2, 3)}`);
    const birthYear = 1940 + rng.int(60);
    const birthplace = rng.int(size.cities);
    const employer = rng.int(size.orgs);
    people.push({
      name,
      birthplace,
      residence: drawOther(rng, size.cities, birthplace),
      employer,
      formerEmployer: drawOther(rng, size.orgs, employer),
      birthDate: drawDate(rng, birthYear),
      birthYear,
      graduationYear: birthYear + 21 + rng.int(5),
    });
  }

  const orgs: Organisation[] = [];
  for (let i = 0; i < size.orgs; i++) {
    const name = drawUniqueName(
      names,
      used,
      split,
      (r) => `${drawWord(r, 1, 2)} ${ORG_SUFFIXES[r.int(ORG_SUFFIXES.length)]}`,
    );
    const founder = rng.int(size.people);
    const headquarters = rng.int(size.cities);
    const foundingYear = people[founder].birthYear + 22 + rng.int(30);
    orgs.push({
      name,
      founder,
      ceo: drawOther(rng, size.people, founder),
      headquarters,
      largestOffice: drawOther(rng, size.cities, headquarters),
      foundingYear,
      listingYear: foundingYear + 3 + rng.int(25),
    });
  }

  return { seed, split, people, cities, countries, orgs };
}

/** Every entity name of a world (people, cities, countries, organisations, currencies, languages). */
export function listWorldNames(world: World): string[] {
  return [
    ...world.people.map((p) => p.name),
    ...world.cities.map((c) => c.name),
    ...world.countries.flatMap((c) => [c.name, c.currency, c.language]),
    ...world.orgs.map((o) => o.name),
  ];
}
