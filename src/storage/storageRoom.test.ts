import { describe, expect, it } from 'vitest';
import { checkCheckpointRoom, checkpointRoomNeeded } from './storageRoom';

const MiB = 2 ** 20;

describe('room for a run’s checkpoints', () => {
  it('a new run needs keepLast + 1 checkpoints at once; a resumed one less the ones it has stored', () => {
    expect(checkpointRoomNeeded({ checkpointBytes: 30 * MiB, keepLast: 2, stored: 0 })).toBe(90 * MiB);
    expect(checkpointRoomNeeded({ checkpointBytes: 30 * MiB, keepLast: 2, stored: 1 })).toBe(60 * MiB);
    expect(checkpointRoomNeeded({ checkpointBytes: 30 * MiB, keepLast: 2, stored: 2 })).toBe(30 * MiB);
    // never less than the one it writes next
    expect(checkpointRoomNeeded({ checkpointBytes: 30 * MiB, keepLast: 2, stored: 5 })).toBe(30 * MiB);
  });

  it('passes at exactly the room needed and refuses one byte short, naming the sizes', () => {
    const room = { checkpointBytes: 100 * MiB, keepLast: 2, stored: 0 };
    expect(() => checkCheckpointRoom({ quota: 1000 * MiB, usage: 700 * MiB }, room, '6 parameters')).not.toThrow();
    let message = '';
    try {
      checkCheckpointRoom({ quota: 1000 * MiB, usage: 700 * MiB + 1 }, room, '6,000 parameters');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('100.0 MiB for 6,000 parameters');
    expect(message).toContain('needs 300.0 MiB more (3 × 100.0 MiB)');
    expect(message).toContain('this site has 300.0 MiB free of the 1000.0 MiB the browser allows it');
    expect(message).toContain('Delete saved runs');
    expect(message).toContain('nothing saved was lost');
  });

  it('a resumed run with its 2 checkpoints stored needs room for one more only', () => {
    const room = { checkpointBytes: 100 * MiB, keepLast: 2, stored: 2 };
    expect(() => checkCheckpointRoom({ quota: 1000 * MiB, usage: 900 * MiB }, room, 'x')).not.toThrow();
    expect(() => checkCheckpointRoom({ quota: 1000 * MiB, usage: 900 * MiB + 1 }, room, 'x')).toThrow(
      /needs 100\.0 MiB more \(1 × 100\.0 MiB\)/,
    );
  });

  it('does not judge from an estimate the browser did not give', () => {
    const room = { checkpointBytes: 100 * MiB, keepLast: 2, stored: 0 };
    for (const estimate of [
      { quota: Number.NaN, usage: 0 },
      { quota: 0, usage: 0 },
      { quota: 10 * MiB, usage: Number.NaN },
    ]) {
      expect(() => checkCheckpointRoom(estimate, room, 'x')).not.toThrow();
    }
  });
});
