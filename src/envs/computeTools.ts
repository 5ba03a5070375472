/**
 * The computation tools (world-independent): calculator, date difference and length
 * conversion, each with a near-duplicate distractor (statistics, adding days, temperature
 * conversion), worded short and long. Optional arguments carry enums and defaults (date
 * difference in days unless asked). Stubs: computeToolSources.ts.
 */
import { CALCULATOR_OPERATIONS, DATE_UNITS, LENGTH_UNITS } from './computeArithmetic';
import {
  ADD_DAYS_SOURCE,
  CALCULATOR_SOURCE,
  CONVERT_TEMPERATURE_SOURCE,
  CONVERT_UNITS_SOURCE,
  DATE_DIFFERENCE_SOURCE,
  STATISTICS_SOURCE,
} from './computeToolSources';
import { deepFreeze, makeSchema, type ToolDef } from './toolDefs';
import type { ParamSchema, ToolImplementation } from './types';

export function buildComputeTools(): ToolDef[] {
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
