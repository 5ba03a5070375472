import { describe, expect, it } from 'vitest';
import { SetupState } from './SetupState.svelte';
import { TeachingState } from './TeachingState.svelte';

describe('TeachingState: a teaching panel apart from the run setup', () => {
  it('moving a teaching knob changes the panel, not the run setup or its URL', () => {
    const setup = new SetupState();
    const gates = new TeachingState(setup, ['q', 'seed'], ['batch', 'steps']);
    const query = setup.queryString;
    gates.set('q', '0.25');
    gates.set('seed', '2');
    expect(gates.effective.pact.anchorProb).toBe(0.25);
    expect(gates.effective.seed).toBe(2);
    expect(setup.values.q).toBe('0.4');
    expect(setup.values.seed).toBe('1');
    expect(setup.queryString).toBe(query);
    expect(gates.changedKeys).toEqual(['q', 'seed']);
  });

  it('follows the run setup for what it has not moved, and copies its values in on request', () => {
    const setup = new SetupState();
    const schedule = new TeachingState(setup, [
      'lambdaStart',
      'lambdaEnd',
      'horizon',
      'steps',
      'reasoning',
      'toolCall',
    ]);
    setup.set('lambdaEnd', '0.3');
    expect(schedule.effective.pact.toolCallScaleEnd).toBe(0.3);
    schedule.set('horizon', '10');
    schedule.set('toolCall', 'fixed');
    schedule.set('lambdaStart', '0.8'); // the run's own value: not a change
    expect(schedule.changedKeys).toEqual(['horizon', 'toolCall']);
    schedule.applyToRun();
    expect(setup.values).toMatchObject({ horizon: '10', toolCall: 'fixed', lambdaEnd: '0.3', lambdaStart: '0.8' });
    expect(setup.queryString).toContain('horizon=10');
    expect(schedule.changedKeys).toEqual([]);
    schedule.set('steps', '40');
    schedule.revert();
    expect(schedule.effective.steps).toBe(24);
    expect(setup.values.steps).toBe('24');
  });

  it('names every value it draws at a default because it is in error, here or in the run setup', () => {
    const setup = new SetupState();
    const gates = new TeachingState(setup, ['q', 'seed'], ['batch', 'steps']);
    gates.set('q', '0.2');
    setup.set('batch', 'two'); // another field, in the run setup
    expect(gates.effective.pact.anchorProb).toBe(0.2);
    expect(gates.fallbacks).toEqual([
      {
        key: 'batch',
        name: 'Prompts per batch',
        where: 'run setup',
        error: 'Prompts per batch must be a number (got "two")',
        drawn: '2',
      },
    ]);
    gates.set('q', '1.5');
    expect(gates.effective.pact.anchorProb).toBe(0.4);
    expect(gates.fallbacks.map((f) => [f.name, f.where, f.drawn])).toEqual([
      ['q', 'here', '0.4'],
      ['Prompts per batch', 'run setup', '2'],
    ]);
    expect(gates.errorOf('q')).toBe('q must be ≤ 1 (got "1.5")');
    expect(setup.errorOf('q')).toBeUndefined();
  });
});
