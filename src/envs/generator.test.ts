import { describe, expect, it } from 'vitest';
import { answerVerify, ftrlSolveMetrics } from '../core/metrics';
import { createTaskGenerator, generateTasks } from './generator';
import { InProcessExecutor } from './sandbox';
import { validateTask } from './taskSchema';
import {
  buildToolCatalog,
  computeCalculator,
  computeConvertUnits,
  computeDateDifference,
  convertNumber,
  RELATIONS,
} from './toolFamilies';
import { TASK_CATEGORIES, type Task } from './types';
import { generateWorld, listWorldNames, splitOfName } from './world';

const LOOKUP_TOOLS = new Set(RELATIONS.map((r) => r.tool));
const COMPUTE_TOOLS = new Set(['calculator', 'date_difference', 'convert_units']);

describe('world', () => {
  it('is deterministic per (seed, split) and keeps its own invariants', () => {
    const a = generateWorld(7, 'train');
    expect(generateWorld(7, 'train')).toEqual(a);
    expect(generateWorld(8, 'train')).not.toEqual(a);
    const names = listWorldNames(a);
    expect(new Set(names).size).toBe(names.length); // unique names: questions are unambiguous
    for (const c of a.countries) {
      expect(c.capital).not.toBe(c.largestCity);
      expect(a.cities[c.capital].country).toBe(a.countries.indexOf(c));
    }
    for (const p of a.people) expect(p.birthDate.slice(0, 4)).toBe(String(p.birthYear));
    for (const o of a.orgs) expect(o.foundingYear - a.people[o.founder].birthYear).toBeGreaterThanOrEqual(22);
  });

  it('never shares an entity name between train and test worlds, whatever the seeds', () => {
    const train = new Set<string>();
    const test = new Set<string>();
    for (let seed = 0; seed < 10; seed++) {
      for (const n of listWorldNames(generateWorld(seed, 'train'))) train.add(n);
      for (const n of listWorldNames(generateWorld(seed, 'test'))) test.add(n);
    }
    for (const n of test) expect(train.has(n)).toBe(false);
    // Whole names are partitioned by hash parity; currency names by their stem.
    for (const n of train) if (!/ (crown|mark|dinar|florin)$/.test(n)) expect(splitOfName(n)).toBe('train');
  });
});

describe('stub arithmetic (hand-computed)', () => {
  it('converts, subtracts and counts days as the stubs do', () => {
    // 1000 m in feet: 1000 · 3.28084 = 3280.84 → 3281
    expect(convertNumber(1000, { unit: 'feet', scale: 3.28084, offset: 0, phraseSuffix: '' })).toBe(3281);
    // 1 234 567 people in thousands: 1234.567 → 1235
    expect(convertNumber(1_234_567, { unit: 'thousands', scale: 0.001, offset: 0, phraseSuffix: '' })).toBe(1235);
    // 10 − 3 − 2 = 5; 7 / 2 = 3.5; max(4, 9, 2) = 9
    expect(computeCalculator('subtract', [10, 3, 2])).toBe(5);
    expect(computeCalculator('divide', [7, 2])).toBe(3.5);
    expect(computeCalculator('max', [4, 9, 2])).toBe(9);
    // 2000-01-01 → 2000-03-01: 31 (Jan) + 29 (Feb, leap year) = 60 days = 8 whole weeks
    expect(computeDateDifference('2000-01-01', '2000-03-01', 'days')).toBe(60);
    expect(computeDateDifference('2000-03-01', '2000-01-01', 'weeks')).toBe(8);
    // 1990-05-10 → 2020-05-09: one day short of 30 years
    expect(computeDateDifference('1990-05-10', '2020-05-09', 'years')).toBe(29);
    // 1234 m = 1.234 km → 1.23
    expect(computeConvertUnits(1234, 'meters', 'kilometers')).toBe(1.23);
  });

  it('the stubs compute the same numbers (run in the sandbox runtime)', async () => {
    const catalog = buildToolCatalog(generateWorld(1, 'train'));
    const ex = new InProcessExecutor();
    const run = (name: string, args: Record<string, unknown>) =>
      ex.execute(catalog.tools.get(name)!.implementation, name, args);
    expect(await run('calculator', { operation: 'subtract', numbers: [10, 3, 2] })).toEqual({
      ok: true,
      output: '{"result": 5}',
    });
    expect(await run('date_difference', { start_date: '2000-03-01', end_date: '2000-01-01', unit: 'weeks' })).toEqual({
      ok: true,
      output: '{"difference": 8, "unit": "weeks"}',
    });
    expect(await run('convert_units', { value: 1234, from_unit: 'meters', to_unit: 'kilometers' })).toEqual({
      ok: true,
      output: '{"value": 1.23, "unit": "kilometers"}',
    });
    const city = catalog.world.cities[0];
    const feet = Math.round(city.elevationMeters * 3.28084);
    expect(await run('get_elevation', { city: city.name.toUpperCase(), unit: 'feet' })).toEqual({
      ok: true,
      output: `{"city": "${city.name.toUpperCase()}", "elevation": ${feet}, "unit": "feet"}`,
    });
    const miss = await run('get_elevation', { city: 'Nowhere' });
    expect(miss).toEqual({ ok: false, output: 'an error occured when call get_elevation: no city named "Nowhere"' });
  });
});

describe('task generator', () => {
  it('same seed → identical tasks; another seed or split → different tasks', () => {
    const a = generateTasks({ seed: 3, n: 60 });
    expect(generateTasks({ seed: 3, n: 60 })).toEqual(a);
    const b = generateTasks({ seed: 4, n: 60 });
    const c = generateTasks({ seed: 3, n: 60, split: 'test' });
    expect(b.map((t) => t.question)).not.toEqual(a.map((t) => t.question));
    expect(c.map((t) => t.question)).not.toEqual(a.map((t) => t.question));
    // Task i does not depend on how many tasks are generated.
    expect(createTaskGenerator({ seed: 3 }).taskAt(41)).toEqual(a[41]);
  });

  it('cycles the four categories and every task passes the schema', () => {
    for (const length of ['short', 'long'] as const) {
      const tasks = generateTasks({ seed: 11, n: 200, length });
      tasks.forEach((t, i) => {
        expect(t.category).toBe(TASK_CATEGORIES[i % 4]);
        const v = validateTask(t);
        if (!v.ok) throw new Error(v.message);
      });
    }
  });

  it('replaying the gold calls solves every sub-question and yields the answer', async () => {
    const ex = new InProcessExecutor();
    const tasks = [
      ...generateTasks({ seed: 5, n: 160 }),
      ...generateTasks({ seed: 6, n: 80, split: 'test', length: 'long', hops: [2, 4], branches: [2, 3] }),
    ];
    for (const task of tasks) {
      const calls: { name: string; output: string }[] = [];
      for (const call of task.goldCalls!) {
        const r = await ex.execute(task.implementations[call.name], call.name, call.arguments);
        expect(r.ok, `${task.id} ${call.name}: ${r.output}`).toBe(true);
        calls.push({ name: call.name, output: r.output });
      }
      const m = ftrlSolveMetrics(calls, task.unsolvedSet);
      expect(m.solveR, task.id).toBe(1);
      expect(m.solveP, task.id).toBe(1);
      const outputs = calls.map((c) => c.output).join('\n');
      expect(answerVerify(outputs, task.answer), `${task.id}: ${task.answer}`).toBe(true);
    }
  });

  it('chains pass each answer on as the next argument (multi_hop)', () => {
    const tasks = generateTasks({ seed: 2, n: 200, categories: ['multi_hop'], hops: 3 });
    for (const t of tasks) {
      const calls = t.goldCalls!;
      const lookups = calls.filter((c) => LOOKUP_TOOLS.has(c.name));
      expect(lookups.length).toBe(3); // the hops knob counts lookups; a conversion may follow
      const answers = calls.map(
        (c, i) => t.unsolvedSet[c.name][calls.slice(0, i).filter((d) => d.name === c.name).length],
      );
      for (let k = 1; k < calls.length; k++) {
        const args = Object.values(calls[k].arguments);
        expect(args.map(String)).toContain(answers[k - 1]);
      }
      expect(t.answer).toBe(answers[answers.length - 1]);
    }
  });

  it('parallel tasks have one branch per knob and combine the branch answers', () => {
    const tasks = generateTasks({ seed: 9, n: 120, categories: ['parallel_single_hop'], branches: 3, distractors: 0 });
    for (const t of tasks) {
      const lookups = t.goldCalls!.filter((c) => LOOKUP_TOOLS.has(c.name));
      expect(lookups.length).toBe(3);
      const combine = t.goldCalls!.filter((c) => COMPUTE_TOOLS.has(c.name));
      if (combine.length === 0) {
        expect(t.answer.split(', ').length).toBe(3); // a list answer
      } else {
        expect(combine.length).toBe(1);
        const numbers = (combine[0].arguments.numbers as number[]).map(String);
        const branchAnswers = lookups.map(
          (c, i) => t.unsolvedSet[c.name][lookups.slice(0, i).filter((d) => d.name === c.name).length],
        );
        expect(numbers).toEqual(branchAnswers);
      }
      expect(t.tools.length).toBe(new Set(t.goldCalls!.map((c) => c.name)).size); // distractors: 0
    }
    const pm = generateTasks({ seed: 9, n: 40, categories: ['parallel_multi_hop'], branches: 2, hops: 2 });
    for (const t of pm) expect(t.goldCalls!.filter((c) => LOOKUP_TOOLS.has(c.name)).length).toBe(4); // 2 branches × 2 hops
  });

  it('adds the near-duplicate of a gold tool first, then other tools', () => {
    // get_birthplace ↔ get_residence (relation) and get_birth_year ↔ get_graduation_year (tool def)
    const near = createTaskGenerator({ seed: 1 }).catalog.nearDuplicates;
    expect(near.get('get_birthplace')).toEqual(['get_residence']);
    expect(near.get('get_graduation_year')).toEqual(['get_birth_year', 'get_birth_date']);
    const catalog = createTaskGenerator({ seed: 1 }).catalog;
    const tasks = generateTasks({ seed: 1, n: 40, categories: ['single_hop'], distractors: 1 });
    for (const t of tasks) {
      const gold = t.goldCalls![0].name;
      expect(t.tools.length).toBe(2);
      const other = t.tools.map((x) => x.function.name).find((n) => n !== gold)!;
      expect(catalog.nearDuplicates.get(gold), `${gold} + ${other}`).toContain(other);
    }
    const many = generateTasks({ seed: 1, n: 8, categories: ['single_hop'], distractors: 6 });
    for (const t of many) expect(t.tools.length).toBe(7);
  });

  it('uses optional arguments with enums when the question asks for a unit', () => {
    const tasks = generateTasks({ seed: 4, n: 400, categories: ['single_hop'] });
    const withUnit = tasks.filter((t) => t.goldCalls![0].arguments.unit !== undefined);
    expect(withUnit.length).toBeGreaterThan(0);
    for (const t of withUnit) expect(t.question).toMatch(/ in (thousands|feet|degrees)/);
  });

  it('rejects bad knobs with a message naming them', () => {
    expect(() => generateTasks({ seed: 1, n: 4, hops: 1 })).toThrow(/hops must be an integer ≥ 2/);
    expect(() => generateTasks({ seed: 1, n: 4, branches: [3, 2] })).toThrow(/branches must be/);
    expect(() => generateTasks({ seed: 1, n: 1, categories: ['two_hop' as never] })).toThrow(
      /unknown category "two_hop"; valid categories: single_hop/,
    );
    expect(() => generateTasks({ seed: 1.5, n: 1 })).toThrow(/seed must be an integer/);
  });

  it('generates 10,000 tasks with unique ids (sanity check, not a timing test)', () => {
    const tasks: Task[] = generateTasks({ seed: 12, n: 10_000 });
    expect(tasks.length).toBe(10_000);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(10_000);
    for (const c of TASK_CATEGORIES) expect(tasks.filter((t) => t.category === c).length).toBe(2_500);
  });
});
