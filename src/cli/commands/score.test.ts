// `pact score` on the committed PyTorch reference fixture (src/model/qwen3/fixtures,
// written by scripts/reference/qwen3_reference.py): the fixture's weights are saved as a
// Hugging Face folder with saveQwen3Folder, and the per-position log-probs the command
// prints must equal the reference `token_logprobs` of the fixture's unpadded row 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../main';
import { readReferenceFixture } from '../../model/qwen3/node';
import { listQwen3ParamShapes } from '../../model/qwen3/config';
import { writeQwen3Folder } from '../../model/weights/testFolders';
import { parseIdList, type ScoredPosition } from './score';

const FIXTURE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../model/qwen3/fixtures');

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

for (const name of ['qwen3_gqa_untied', 'qwen3_mqa_tied']) {
  describe(`pact score on the reference fixture ${name}`, () => {
    const fx = readReferenceFixture(FIXTURE_DIR, name);
    const [B, T] = fx.tensors.get('input_ids')!.shape;
    const ids = Array.from(fx.tensors.get('input_ids')!.data.slice(0, T));
    const refLogprobs = fx.tensors.get('token_logprobs')!.data.slice(0, T - 1); // row 0, [T−1]
    const refTargetMask = fx.tensors.get('target_mask')!.data.slice(0, T - 1);
    let dir: string;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'pact-score-'));
      const tensors = [...listQwen3ParamShapes(fx.config).keys()].map((n) => ({ name: n, ...fx.tensors.get(n)! }));
      await writeQwen3Folder(dir, { config: fx.config, tensors });
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reproduces the PyTorch log-probs of every next id (|err| < 1e-4) and ranks the top-5', async () => {
      expect(B).toBeGreaterThan(1);
      expect(Array.from(refTargetMask).every((m) => m === 1)).toBe(true); // row 0 is the unpadded row
      const c = capture();
      expect(await main(['score', '--model', dir, '--ids', ids.join(','), '--json', '--backend', 'cpu'], c.io)).toBe(0);
      const { positions } = JSON.parse(c.out[0]) as { positions: ScoredPosition[] };
      expect(positions.length).toBe(T);
      for (let t = 0; t < T - 1; t++) {
        expect(positions[t].nextId).toBe(ids[t + 1]);
        expect(Math.abs(positions[t].nextLogprob! - refLogprobs[t])).toBeLessThan(1e-4);
        const top = positions[t].top.map((x) => x.logprob);
        expect(top.length).toBe(5);
        for (let k = 1; k < 5; k++) expect(top[k]).toBeLessThanOrEqual(top[k - 1]);
        // The next id's log-prob cannot beat the best one, and is in the top-5 iff it is ≥ the 5th.
        expect(positions[t].nextLogprob!).toBeLessThanOrEqual(top[0] + 1e-6);
        const isInTop = positions[t].top.some((x) => x.id === ids[t + 1]);
        expect(isInTop).toBe(positions[t].nextLogprob! >= top[4]);
      }
      expect(positions[T - 1].nextId).toBeUndefined();
    });

    it('prints a table whose mean loss equals −mean(reference log-probs)', async () => {
      const c = capture();
      expect(await main(['score', '--model', dir, '--ids', ids.join(','), '--backend', 'cpu'], c.io)).toBe(0);
      const refLoss = -Array.from(refLogprobs).reduce((a, b) => a + b, 0) / (T - 1);
      const last = c.out.at(-1)!;
      expect(last.startsWith('mean next-token loss: ')).toBe(true);
      expect(Math.abs(Number(last.split(': ')[1]) - refLoss)).toBeLessThan(1e-5);
      expect(c.out.length).toBe(1 + T + 1); // header, one line per position, the loss
    });
  });
}

describe('pact score input errors', () => {
  it('names the bad --ids item and a missing --model', async () => {
    expect(() => parseIdList('1,x,3', 64)).toThrow('--ids: item 1 ("x") is not a non-negative integer');
    expect(() => parseIdList('1,64', 64)).toThrow('--ids: item 1 (64) is not below vocab_size 64');
    const c = capture();
    expect(await main(['score', '--ids', '1,2'], c.io)).toBe(2);
    expect(c.err[0]).toBe('pact score: --model DIR is required');
  });
});
