// `pact eval-bfcl`: the command end to end on the fixture entries (src/envs/bfcl/fixtures:
// SimpleCounterAPI) with a random Qwen3 over the full vocabulary and the real tokenizer: it
// runs, scores every entry (a random model makes no valid call, so 0 correct), and the
// accuracy is finite; without --bfcl-src it says where BFCL's backends come from.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../main';
import { selectBackend } from '../../model/backend';
import { createRandomQwen3Tensors, createTinyQwen3Config, writeQwen3Folder } from '../../model/weights/testFolders';
import { formatBfclTable } from './evalBfcl';

const fixtures = fileURLToPath(new URL('../../envs/bfcl/fixtures/', import.meta.url));
const entries = path.join(fixtures, 'data', 'handmade_multi_turn_simple.json');
const bfclSrc = path.join(fixtures, 'bfcl_src');

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe('pact eval-bfcl', () => {
  let dir: string;

  beforeAll(async () => {
    await selectBackend('cpu');
    dir = mkdtempSync(path.join(os.tmpdir(), 'pact-bfcl-eval-'));
    // Qwen3's full vocabulary (the packaged tokenizer), a tiny random body, a 2,048-token window.
    const config = createTinyQwen3Config({ vocab_size: 151_936, max_position_embeddings: 2048 });
    await writeQwen3Folder(path.join(dir, 'model'), { config, tensors: await createRandomQwen3Tensors(config, 5) });
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("without --bfcl-src: says that the backends are BFCL's own source and where to get it", async () => {
    const { io, err } = capture();
    expect(await main(['eval-bfcl', '--data', entries, '--model', path.join(dir, 'model')], io)).toBe(2);
    expect(err.join('\n')).toContain('--bfcl-src DIR is required');
    expect(err.join('\n')).toContain('https://github.com/ShishirPatil/gorilla');
    expect(err.join('\n')).toContain('not part of PACT Lab');
  });

  it('a random full-vocabulary Qwen3 on one fixture entry: runs, scores 0 of 1, finite', async () => {
    const { io, out, err } = capture();
    const code = await main(
      [
        'eval-bfcl',
        '--data',
        entries,
        '--bfcl-src',
        bfclSrc,
        '--model',
        path.join(dir, 'model'),
        '--limit',
        '1',
        '--max-response-tokens',
        '8',
        '--backend',
        'cpu',
        '--json',
      ],
      io,
    );
    expect(code, err.join('\n')).toBe(0);
    const report = JSON.parse(out.join('\n'));
    expect(report.classProblems).toEqual({});
    expect(report.overall).toMatchObject({ name: 'overall', entries: 1, correct: 0, promptTooLong: 0, errors: 0 });
    expect(Number.isFinite(report.overall.accuracy)).toBe(true);
    expect(report.overall.accuracy).toBe(0);
    expect(report.entries).toHaveLength(1);
    // Two turns, at least one step each (8 random tokens hold no well-formed call).
    expect(report.entries[0]).toMatchObject({ id: 'multi_turn_simple_0', valid: false, status: 'completed' });
    expect(report.entries[0].steps).toBeGreaterThanOrEqual(2);
    expect(report.entries[0].errorType).toBe('multi_turn:empty_turn_model_response');
  }, 300_000);

  const realData = path.resolve(
    process.env.PACT_DATA_DIR ??
      path.join(fileURLToPath(new URL('../../../', import.meta.url)), '..', 'shared', 'data'),
    'bfcl',
    'BFCL_v4_multi_turn_base.json',
  );
  it.skipIf(!process.env.PACT_BFCL_SRC || !existsSync(realData))(
    "with $PACT_BFCL_SRC: one real base entry through BFCL's own backends (a random model with an 8,192-token window), 0 of 1",
    async () => {
      const config = createTinyQwen3Config({ vocab_size: 151_936, max_position_embeddings: 8192 });
      await writeQwen3Folder(path.join(dir, 'model8k'), { config, tensors: await createRandomQwen3Tensors(config, 5) });
      const { io, out, err } = capture();
      const args = [
        'eval-bfcl',
        '--data',
        realData,
        '--bfcl-src',
        process.env.PACT_BFCL_SRC!,
        '--model',
        path.join(dir, 'model8k'),
      ];
      const code = await main(
        [...args, '--limit', '1', '--max-response-tokens', '4', '--backend', 'cpu', '--json'],
        io,
      );
      expect(code, err.join('\n')).toBe(0);
      const report = JSON.parse(out.join('\n'));
      expect(report.overall).toMatchObject({ entries: 1, correct: 0, accuracy: 0, promptTooLong: 0, errors: 0 });
      expect(report.entries[0]).toMatchObject({
        id: 'multi_turn_base_0',
        status: 'completed',
        errorType: 'multi_turn:empty_turn_model_response',
        turn: 0,
      });
    },
    600_000,
  );

  it('formats one row per file and the overall row', () => {
    const row = {
      name: 'f.json',
      category: 'multi_turn_base',
      entries: 4,
      correct: 1,
      accuracy: 0.25,
      promptTooLong: 1,
      errors: 0,
    };
    expect(
      formatBfclTable({ rows: [row], overall: { ...row, name: 'overall', category: 'all' }, entries: [] }).split('\n'),
    ).toEqual([
      '| file | category | entries | correct | accuracy | prompt over window | errors |',
      '|---|---|---:|---:|---:|---:|---:|',
      '| f.json | multi_turn_base | 4 | 1 | 25.0% | 1 | 0 |',
      '| overall | all | 4 | 1 | 25.0% | 1 | 0 |',
    ]);
  });
});
