/**
 * The JavaScript stubs of the computation tools, as source text the sandbox runs: each
 * validates its arguments and rounds as its arithmetic in computeArithmetic.ts does.
 * computeTools.ts pairs them with their schemas.
 */
import { CALCULATOR_OPERATIONS, METERS_PER } from './computeArithmetic';

export const CALCULATOR_SOURCE = `(args) => {
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

export const STATISTICS_SOURCE = `(args) => {
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

export const DATE_DIFFERENCE_SOURCE = `(args) => {
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

export const ADD_DAYS_SOURCE = `(args) => {
  const m = typeof args.date === 'string' ? /^(\\d{4})-(\\d{2})-(\\d{2})$/.exec(args.date) : null;
  if (!m) throw new Error('date must be a string in YYYY-MM-DD format');
  if (!Number.isInteger(args.days)) throw new Error('days must be an integer');
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + args.days));
  return { date: d.toISOString().slice(0, 10) };
}`;

export const CONVERT_UNITS_SOURCE = `(args) => {
  const per = ${JSON.stringify(METERS_PER)};
  if (typeof args.value !== 'number' || !Number.isFinite(args.value)) throw new Error('value must be a finite number');
  if (!Object.prototype.hasOwnProperty.call(per, args.from_unit)) throw new Error('from_unit must be one of ' + Object.keys(per).join(', '));
  if (!Object.prototype.hasOwnProperty.call(per, args.to_unit)) throw new Error('to_unit must be one of ' + Object.keys(per).join(', '));
  return { value: Math.round(args.value * per[args.from_unit] / per[args.to_unit] * 100) / 100, unit: args.to_unit };
}`;

export const CONVERT_TEMPERATURE_SOURCE = `(args) => {
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
