/**
 * The order the trainer reads its prompts in (Algorithm 1 line 2, "sample a batch of
 * prompts"): each epoch is a seeded Fisher–Yates permutation of the train prompts, drawn
 * from the run's root stream split by epoch (`data/epoch<e>`), and the data cursor is the
 * position in the concatenation of the epochs. The order depends on the seed and the epoch
 * only, so a resumed run (same seed, restored cursor) reads the same prompts.
 */
import { permutation, type Rng } from '../../core/rng';
import type { PromptItem } from '../types';

export class EpochOrder {
  /** Each epoch's permutation of the train prompts' indices, drawn once. */
  private readonly orders = new Map<number, number[]>();

  constructor(private readonly prompts: readonly PromptItem[]) {}

  /** The prompts at positions cursor, cursor + 1, …, cursor + n − 1 of the epoch-shuffled order. */
  promptsAt(cursor: number, n: number, root: Rng): PromptItem[] {
    const total = this.prompts.length;
    const out: PromptItem[] = [];
    for (let position = cursor; position < cursor + n; position++) {
      const epoch = Math.floor(position / total);
      out.push(this.prompts[this.orderOfEpoch(epoch, root)[position % total]]);
    }
    return out;
  }

  private orderOfEpoch(epoch: number, root: Rng): number[] {
    let order = this.orders.get(epoch);
    if (!order) {
      order = permutation(this.prompts.length, root.split(`data/epoch${epoch}`));
      this.orders.set(epoch, order);
    }
    return order;
  }
}
