/**
 * The pure core of PACT Lab: the papers' math over plain arrays (no tfjs, no DOM).
 * Later layers (tfjs model, recipes, UI) reuse these and test their versions against them.
 */
export * from './types';
export * from './registry';
export * from './stats';
export * from './rng';
export * from './hungarian';
export * from './matching';
export * from './rewards';
export * from './advantages';
export * from './losses';
export * from './schedules';
export * from './gates';
export * from './masks';
export * from './metrics';
export * from './sftSchedule';
export * from './gspo';
export * from './toolrlReward';
export * from './ftrlReward';
export * from './toolSearcherCredit';
export * from './gdpo';
