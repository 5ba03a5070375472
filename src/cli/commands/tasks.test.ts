import { describe, expect, it } from 'vitest';
import { main } from '../main';
import { generateTasks } from '../../envs/generator';
import { validateTask } from '../../envs/taskSchema';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe('pact tasks', () => {
  it('prints five generated tasks with question, tools, gold calls and answer', async () => {
    const c = capture();
    expect(await main(['tasks', '--n', '5', '--seed', '1'], c.io)).toBe(0);
    const expected = generateTasks({ seed: 1, n: 5 });
    const headers = c.out.filter((l) => l.startsWith('# '));
    expect(headers).toEqual(expected.map((t) => `# ${t.id} (${t.category})`));
    expect(c.out).toContain(`question: ${expected[0].question}`);
    expect(c.out).toContain(`answer: ${expected[4].answer}`);
    expect(c.out).toContain(
      `gold call 1: ${expected[1].goldCalls![0].name} ${JSON.stringify(expected[1].goldCalls![0].arguments)}`,
    );
    // Each task carries its verified teacher trace with prefix levels: one trace header per
    // task, and each turn line lists five cumulative levels starting at L0 = 0.
    const text = c.out.join('\n');
    expect(expected.map((t) => text.includes(`trace ${t.id} (teacher, verified)`))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    const levelLines = text.split('\n').filter((l) => /^  turn \d+  L0\.\.L4 = /.test(l));
    expect(levelLines.length).toBeGreaterThanOrEqual(5 + 5); // ≥ one tool turn + one answer turn per task
    for (const l of levelLines) {
      const levels = JSON.parse(l.slice(l.indexOf('['))) as number[];
      expect(levels.length).toBe(5);
      expect(levels[0]).toBe(0);
      for (let k = 1; k < 5; k++) expect(levels[k]).toBeGreaterThanOrEqual(levels[k - 1]);
    }
  });

  it('--json prints one valid task (with its expert trace) a line, and the knobs reach the generator', async () => {
    const c = capture();
    expect(
      await main(
        [
          'tasks',
          '--n',
          '3',
          '--seed',
          '2',
          '--json',
          '--split',
          'test',
          '--categories',
          'multi_hop',
          '--hops',
          '3',
          '--distractors',
          '0',
        ],
        c.io,
      ),
    ).toBe(0);
    expect(c.out.length).toBe(3);
    for (const line of c.out) {
      const v = validateTask(JSON.parse(line));
      expect(v.ok).toBe(true);
      if (v.ok) {
        expect(v.task.category).toBe('multi_hop');
        expect(v.task.id).toMatch(/^gen-test-2-/);
        expect(v.task.expertTrace?.verified).toBe(true);
        expect(v.task.tools.length).toBe(new Set(v.task.goldCalls!.map((g) => g.name)).size);
      }
    }
  });

  it('names a bad flag value', async () => {
    const c = capture();
    expect(await main(['tasks', '--split', 'dev'], c.io)).toBe(2);
    expect(c.err[0]).toBe('pact tasks: --split must be train or test, got "dev"');
    const d = capture();
    expect(await main(['tasks', '--n', 'five'], d.io)).toBe(2);
    expect(d.err[0]).toBe('pact tasks: --n must be an integer, got "five"');
  });
});
