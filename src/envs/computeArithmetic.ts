/**
 * The arithmetic of the computation tools (calculator, date difference, unit conversion),
 * for the generator's answers: each function mirrors its stub (computeToolSources.ts)
 * exactly, so that the answers equal the stubs' outputs (checked by replaying gold calls).
 */

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

export const LENGTH_UNITS = ['meters', 'feet', 'kilometers', 'miles'] as const;
export type LengthUnit = (typeof LENGTH_UNITS)[number];
/** Meters per unit. */
export const METERS_PER: Record<LengthUnit, number> = { meters: 1, feet: 0.3048, kilometers: 1000, miles: 1609.344 };

/** The convert_units stub's arithmetic. */
export function computeConvertUnits(value: number, from: LengthUnit, to: LengthUnit): number {
  return roundTo2((value * METERS_PER[from]) / METERS_PER[to]);
}
