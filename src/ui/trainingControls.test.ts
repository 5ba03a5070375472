import { describe, expect, it } from 'vitest';
import { computeControls, wordStartError } from './trainingControls';

describe('training buttons', () => {
  it('starts only when no run is active or starting', () => {
    expect(computeControls('idle', false)).toEqual({
      canTrain: true,
      isResume: false,
      canPause: false,
      canStep: false,
      canStop: false,
      canReset: false,
    });
    expect(computeControls('starting', false).canTrain).toBe(false);
    expect(computeControls('finished', false)).toMatchObject({ canTrain: true, canReset: true, canStop: false });
  });

  it('pauses a running run; steps, resumes and stops a paused one', () => {
    expect(computeControls('running', false)).toEqual({
      canTrain: false,
      isResume: false,
      canPause: true,
      canStep: false,
      canStop: true,
      canReset: true,
    });
    expect(computeControls('paused', false)).toEqual({
      canTrain: true,
      isResume: true,
      canPause: false,
      canStep: true,
      canStop: true,
      canReset: true,
    });
    // a request in flight disables everything
    expect(Object.values(computeControls('paused', true)).filter((v) => v === true)).toEqual([true]); // only isResume
  });
});

describe('buttons while a Pause or Stop waits for the step, and for a saved run', () => {
  it('a pending Pause still allows Stop; a pending Stop allows nothing', () => {
    expect(computeControls('running', false, { pendingControl: 'pause' })).toEqual({
      canTrain: false,
      isResume: false,
      canPause: false,
      canStep: false,
      canStop: true,
      canReset: true,
    });
    expect(computeControls('running', false, { pendingControl: 'stop' })).toEqual({
      canTrain: false,
      isResume: false,
      canPause: false,
      canStep: false,
      canStop: false,
      canReset: false,
    });
    expect(computeControls('paused', false, { pendingControl: 'stop' })).toMatchObject({
      canTrain: false,
      canStep: false,
      canStop: false,
    });
  });

  it('a saved run (after a reload) is resumed by Train when it can be, and never paused, stepped or stopped', () => {
    expect(computeControls('saved', false, { canResumeSaved: true })).toEqual({
      canTrain: true,
      isResume: true,
      canPause: false,
      canStep: false,
      canStop: false,
      canReset: true,
    });
    expect(computeControls('saved', false, { canResumeSaved: false })).toMatchObject({
      canTrain: true,
      isResume: false,
    });
    expect(computeControls('saved', true, { canResumeSaved: true })).toMatchObject({
      canTrain: false,
      canReset: false,
    });
  });
});

describe('start errors name the field', () => {
  it('puts the form name before each config path', () => {
    const msg = 'invalid training config:\n  config.pact.anchorProb: must be ≤ 1 (got 1.5)\n  config.clipEps: too big';
    expect(wordStartError(msg)).toBe(
      'invalid training config: q (config.pact.anchorProb): must be ≤ 1 (got 1.5); config.clipEps: too big',
    );
    expect(wordStartError('no WebGPU')).toBe('no WebGPU');
  });
});
