import { describe, expect, it } from 'vitest';
import { main, helpText } from './main';
import { parseFlags } from './registry';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe('pact CLI', () => {
  it('--help lists every registered command and exits 0', async () => {
    const c = capture();
    expect(await main(['--help'], c.io)).toBe(0);
    expect(c.out.join('\n')).toBe(helpText());
    expect(helpText()).toContain('usage: pact <command>');
  });

  it('an unknown command fails with exit 2 and names the valid commands', async () => {
    const c = capture();
    expect(await main(['no-such-command'], c.io)).toBe(2);
    expect(c.err[0]).toMatch(/^pact no-such-command: unknown command "no-such-command"; valid commands: /);
  });

  it('parseFlags reads --a b, --a=b and booleans, and names an unknown flag', () => {
    const r = parseFlags(['x', '--tasks', 't.jsonl', '--n=5', '--json'], {
      values: ['tasks', 'n'],
      booleans: ['json'],
    });
    expect(r).toEqual({ flags: { tasks: 't.jsonl', n: '5', json: true }, positional: ['x'] });
    expect(() => parseFlags(['--nope'], { values: ['tasks'] })).toThrow('unknown flag --nope; valid flags: --tasks');
    expect(() => parseFlags(['--tasks'], { values: ['tasks'] })).toThrow('flag --tasks needs a value');
  });
});
