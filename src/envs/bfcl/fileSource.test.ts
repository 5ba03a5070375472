// The picked-folder reader (fileSource.ts) against the disk reader (nodeSource.ts) on the
// hand-written fixtures: the same backend sources and the same entries, and the errors that
// name what a picked folder lacks. The fixture entry files are stored as handmade_multi_turn_…,
// which the reader (BFCL's names only) refuses; they are picked as a copy of BFCL's data
// folder would hold them, each handmade_ prefix made BFCL_v4_ (`pickAsBfcl`).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readBfclBackendSources, readBfclFile } from './nodeSource';
import { parseBfclDataTexts, readBfclDataFolder, readBfclSourceFolder, type PickedTextFile } from './fileSource';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** A folder as `<input webkitdirectory>` gives it: paths start with the folder's own name. */
function pick(dir: string, name = path.basename(dir)): PickedTextFile[] {
  const out: PickedTextFile[] = [];
  const walk = (d: string, rel: string) => {
    for (const n of readdirSync(d).sort()) {
      const full = path.join(d, n);
      if (statSync(full).isDirectory()) walk(full, `${rel}/${n}`);
      else out.push({ path: `${rel}/${n}`, read: async () => readFileSync(full, 'utf8') });
    }
  };
  walk(dir, name);
  return out;
}

const HANDMADE = 'handmade_';
const FIXTURE_ENTRIES = `${HANDMADE}multi_turn_simple.json`;

/** The fixture data folder picked under BFCL's own file names (each `handmade_` prefix made `BFCL_v4_`). */
function pickAsBfcl(dir: string): PickedTextFile[] {
  return pick(dir).map((f) => ({ ...f, path: f.path.split(`/${HANDMADE}`).join('/BFCL_v4_') }));
}

describe('readBfclSourceFolder', () => {
  it('finds the backends as nodeSource.ts does, from the folder above bfcl_eval or func_source_code itself', async () => {
    const expected = readBfclBackendSources(path.join(fixtures, 'bfcl_src'));
    expect(await readBfclSourceFolder(pick(path.join(fixtures, 'bfcl_src')))).toEqual(expected);
    expect(expected.classModules).toEqual({
      SimpleCounterAPI: 'bfcl_eval.eval_checker.multi_turn_eval.func_source_code.simple_counter',
    });
    const inner = path.join(fixtures, 'bfcl_src/bfcl_eval/eval_checker/multi_turn_eval/func_source_code');
    expect((await readBfclSourceFolder(pick(inner))).classModules).toEqual(expected.classModules);
  });

  it("says that the backends are BFCL's own source when the folder has none", async () => {
    await expect(readBfclSourceFolder(pick(path.join(fixtures, 'data')))).rejects.toThrow(
      /no bfcl_eval\/eval_checker\/multi_turn_eval\/func_source_code folder .*not part of PACT Lab/,
    );
  });
});

describe('readBfclDataFolder + parseBfclDataTexts', () => {
  it('reads the entry files with their answers and docs; the pairs equal the disk reader', async () => {
    const texts = await readBfclDataFolder(pickAsBfcl(path.join(fixtures, 'data')));
    expect(texts.files.map((f) => f.file)).toEqual(['BFCL_v4_multi_turn_simple.json']);
    expect(Object.keys(texts.funcDocs)).toEqual(['simple_counter_api.json']);
    const [parsed] = parseBfclDataTexts(texts);
    const disk = readBfclFile(path.join(fixtures, 'data', FIXTURE_ENTRIES));
    expect(parsed.pairs).toEqual(disk.pairs);
    expect([...parsed.docsByClass]).toEqual([...disk.docsByClass]);
    // --limit: the first N entries of each file.
    expect(parseBfclDataTexts(texts, 2)[0].pairs.map((p) => p.entry.id)).toEqual([
      'multi_turn_simple_0',
      'multi_turn_simple_1',
    ]);
  });

  it('names a missing answers file, missing docs, and a folder without entry files', async () => {
    const files = pickAsBfcl(path.join(fixtures, 'data'));
    await expect(readBfclDataFolder(files.filter((f) => !f.path.includes('possible_answer/')))).rejects.toThrow(
      'BFCL_v4_multi_turn_simple.json: its possible answers (possible_answer/BFCL_v4_multi_turn_simple.json) are not in this folder',
    );
    await expect(readBfclDataFolder(files.filter((f) => !f.path.includes('multi_turn_func_doc/')))).rejects.toThrow(
      'the function docs of SimpleCounterAPI (multi_turn_func_doc/simple_counter_api.json) are not in this folder',
    );
    await expect(readBfclDataFolder(pick(path.join(fixtures, 'bfcl_src')))).rejects.toThrow(
      /no BFCL_v4_multi_turn_<category>\.json at the top of this folder/,
    );
  });

  it("refuses the fixture folder as stored: handmade_ files are not BFCL's entry files", async () => {
    const stored = pick(path.join(fixtures, 'data'));
    expect(stored.map((f) => f.path)).toContain(`data/${FIXTURE_ENTRIES}`);
    expect(stored.map((f) => f.path)).toContain(`data/possible_answer/${FIXTURE_ENTRIES}`);
    await expect(readBfclDataFolder(stored)).rejects.toThrow(
      /no BFCL_v4_multi_turn_<category>\.json at the top of this folder/,
    );
  });
});
