/**
 * `npm run pretrain`: trains the shipped warm-start policy
 * and writes public/warm-start/ (config.json, model.safetensors, pruned_vocab.json,
 * warm_start.json). Reproducible from its seed: the vocabulary, the training tasks and
 * traces, the batch order and the initial weights all derive from --seed.
 *
 * Pipeline: buildPolicyVocab (src/recipes/policyVocab.ts) → expert episodes of generated
 * train tasks (TRAIN_CATEGORIES) [+ search-teacher episodes, --search-tasks] → runWarmStartSft →
 * evaluateGreedy on test-split tasks of all four categories [+ evaluateSearchGreedy on held-out
 * search queries] → exportWarmStartFiles. See src/recipes/warmStart/index.ts for the objective.
 *
 * Options, and a search fine-tune tried on CPU: docs/runs.md.
 */
import { execSync } from 'node:child_process';
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// tfjs-core's ESM sources need this resolve hook under plain Node (see the hook's header);
// it must be registered before anything imports tfjs, hence the dynamic imports below.
register(new URL('../src/model/qwen3/nodeResolveHook.mjs', import.meta.url));

/**
 * Training categories, cycled: two single-hop tasks per multi-hop one. Single-hop episodes
 * fit maxSeqLen whole; parallel ones would be cut before their answer turn.
 */
const TRAIN_CATEGORIES = ['single_hop', 'single_hop', 'multi_hop'] as const;
const ALL_CATEGORIES = ['single_hop', 'multi_hop', 'parallel_single_hop', 'parallel_multi_hop'] as const;
type Category = (typeof ALL_CATEGORIES)[number];

function readCategories(value: string | undefined): readonly Category[] {
  if (value === undefined) return TRAIN_CATEGORIES;
  const names = value
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (names.length === 0) throw new Error('--categories is empty');
  for (const c of names) {
    if (!(ALL_CATEGORIES as readonly string[]).includes(c))
      throw new Error(`--categories: unknown category "${c}"; valid: ${ALL_CATEGORIES.join(', ')}`);
  }
  return names as Category[];
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function readFlags(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument "${a}"`);
    const eq = a.indexOf('=');
    if (eq >= 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else {
      const v = argv[++i];
      if (v === undefined) throw new Error(`flag ${a} needs a value`);
      out[a.slice(2)] = v;
    }
  }
  return out;
}

const KNOWN = [
  'seed',
  'steps',
  'backend',
  'out',
  'train-tasks',
  'vocab-tasks',
  'eval-tasks',
  'max-seq-len',
  'batch-size',
  'lr',
  'init',
  'worlds',
  'categories',
  'export-rows',
  'search-tasks',
  'vocab-search-tasks',
  'search-eval-tasks',
];

function readGitCommit(): string {
  try {
    return execSync('git rev-parse HEAD', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const flags = readFlags(process.argv.slice(2));
  for (const k of Object.keys(flags))
    if (!KNOWN.includes(k)) throw new Error(`unknown flag --${k}; valid: ${KNOWN.map((f) => `--${f}`).join(', ')}`);
  const { selectBackend } = await import('../src/model/backend');
  const { getNodeWasmPaths } = await import('../src/model/qwen3/node');
  const { Qwen3Model, getQwen3Preset } = await import('../src/model/qwen3/index');
  const { loadQwen3TokenizerFromPackage } = await import('../src/model/tokenizer/nodeLoader');
  const { InProcessExecutor } = await import('../src/envs/sandbox');
  const { RolloutEnv } = await import('../src/envs/rollout');
  const { generateTasks } = await import('../src/envs/generator');
  const { writeFolderFiles } = await import('../src/model/weights/nodeFiles');
  const pv = await import('../src/recipes/policyVocab');
  const ws = await import('../src/recipes/warmStart/index');
  const readInt = (from: Record<string, string>, name: string, fallback: number): number =>
    ws.readCount(from[name], name) ?? fallback;

  const preset = 'qwen3-nano';
  const options = {
    ...ws.DEFAULT_WARM_START_OPTIONS,
    seed: readInt(flags, 'seed', ws.DEFAULT_WARM_START_OPTIONS.seed),
    steps: readInt(flags, 'steps', ws.DEFAULT_WARM_START_OPTIONS.steps),
    maxSeqLen: readInt(flags, 'max-seq-len', ws.DEFAULT_WARM_START_OPTIONS.maxSeqLen),
    batchSize: readInt(flags, 'batch-size', ws.DEFAULT_WARM_START_OPTIONS.batchSize),
    lrPeak: flags.lr !== undefined ? Number(flags.lr) : ws.DEFAULT_WARM_START_OPTIONS.lrPeak,
  };
  const trainTaskCount = readInt(flags, 'train-tasks', 300);
  const vocabTaskCount = readInt(flags, 'vocab-tasks', pv.DEFAULT_VOCAB_TASKS);
  const evalTaskCount = readInt(flags, 'eval-tasks', 20);
  const outDir = path.resolve(ROOT, flags.out ?? path.join('public', ws.WARM_START_DIR));
  const backendName = (flags.backend ?? 'wasm') as 'wasm' | 'cpu';
  if (backendName !== 'wasm' && backendName !== 'cpu')
    throw new Error(`--backend must be wasm or cpu, got "${backendName}"`);

  const selection = await selectBackend(backendName, { wasmPaths: getNodeWasmPaths() });
  console.log(`backend: ${selection.backend}${selection.reason ? ` (${selection.reason})` : ''}`);
  const source = await loadQwen3TokenizerFromPackage();
  const executor = new InProcessExecutor();
  const presetConfig = getQwen3Preset(preset);

  const { readFile } = await import('node:fs/promises');
  const previous =
    flags.init !== undefined
      ? await ws.loadWarmStart(async (n) => new Uint8Array(await readFile(path.resolve(ROOT, flags.init, n))))
      : undefined;
  const search = ws.resolveSearchWarmStartCounts(
    {
      searchTasks: flags['search-tasks'],
      vocabSearchTasks: flags['vocab-search-tasks'],
      searchEvalTasks: flags['search-eval-tasks'],
    },
    previous ? { dir: flags.init!, info: previous.info } : undefined,
  );
  // Search episodes: the vocabulary's come first in the same stream, so the trained ones are in it.
  const searchRender = pv.bindRenderChat(source);
  const searchPool = ws.generateSearchSftTasks(
    { seed: options.seed, n: Math.max(search.searchTasks, search.vocabSearchTasks), split: 'train' },
    searchRender,
  );
  const searchTexts: string[] = [];
  for (const task of searchPool.tasks.slice(0, search.vocabSearchTasks))
    searchTexts.push((await ws.encodeSearchEpisode(task, source)).text);
  const vocab = await pv.buildPolicyVocab(
    { seed: options.seed, nTasks: vocabTaskCount, maxVocabSize: presetConfig.vocab_size, extraTexts: searchTexts },
    source,
    executor,
  );
  console.log(
    `pruned vocabulary: ${vocab.mapping.keptIds.length} tokens kept (uncapped ${vocab.uncappedSize}, preset vocab_size ${presetConfig.vocab_size}; ` +
      `corpus: ${vocabTaskCount} tool-use tasks + ${search.vocabSearchTasks} search episodes)`,
  );

  const env = new RolloutEnv({ executor, renderChat: pv.bindRenderChat(source) });
  // One generated world has only 6 countries, 16 cities, 24 people and 12 organisations, and
  // the test split is another world: trained on one world, the policy memorises its names
  // instead of copying the question's (it wrote a train-world name into held-out calls).
  // `--worlds N` spreads the train tasks over N worlds, so only copying fits them all.
  const worldCount = readInt(flags, 'worlds', 1);
  if (worldCount < 1) throw new Error('--worlds must be ≥ 1');
  const categories = readCategories(flags.categories);
  const evalOnly = flags.init !== undefined && options.steps === 0;
  if (evalOnly && search.isVocabExtended)
    throw new Error(
      '--vocab-search-tasks grows the vocabulary of --init for training; with --steps 0 there is nothing to train',
    );
  const trainTasks = [];
  for (let w = 0; w < (evalOnly ? 0 : worldCount); w++) {
    const n = Math.floor(trainTaskCount / worldCount) + (w < trainTaskCount % worldCount ? 1 : 0);
    const seed = worldCount === 1 ? options.seed : options.seed * 1000 + w;
    trainTasks.push(...(await pv.generateExpertTasks({ seed, n, generator: { categories } }, executor)));
  }
  const rows = [];
  for (const task of trainTasks) {
    const episode = pv.encodeEpisode(await pv.replayExpertEpisode(task, env), vocab.tokenizer);
    const row = ws.buildSftRow(episode, options.maxSeqLen);
    // A multi-hop prompt can fill the whole window: keep rows with a real assistant part.
    if (row.targetMask.reduce((a, b) => a + b, 0) >= 32) rows.push(row);
  }
  const meanLen = rows.reduce((s, r) => s + r.ids.length, 0) / Math.max(1, rows.length);
  if (!evalOnly)
    console.log(
      `training rows: ${rows.length} of ${trainTasks.length} expert episodes, mean ${meanLen.toFixed(0)} tokens (cut at ${options.maxSeqLen})`,
    );
  const toolUseRowCount = rows.length;
  if (!evalOnly && search.searchTasks > 0) {
    let whole = 0;
    let pruned = 0;
    let full = 0;
    for (const task of searchPool.tasks.slice(0, search.searchTasks)) {
      const episode = await ws.encodeSearchEpisode(task, vocab.tokenizer);
      pruned += episode.ids.length;
      full += source.encode(episode.text).length;
      const row = ws.buildSftRow(episode, options.maxSeqLen);
      if (row.ids.length === episode.ids.length) whole++;
      if (row.targetMask.reduce((a, b) => a + b, 0) >= 32) rows.push(row);
    }
    const n = Math.min(search.searchTasks, searchPool.tasks.length);
    const kept = rows.length - toolUseRowCount;
    console.log(
      `search rows: ${kept} of ${n} search-teacher episodes (${searchPool.skipped} queries the teacher could not solve skipped), ` +
        `mean ${(pruned / n).toFixed(0)} tokens (${(full / n).toFixed(0)} with Qwen3's full vocabulary); ${whole} of ${n} fit --max-seq-len ${options.maxSeqLen} whole, <tool_list> turn included`,
    );
    if (search.vocabSearchTasks === 0) {
      console.log(
        `note: this vocabulary was built without search text${previous ? ` (--init ${flags.init} keeps its own)` : ''}: search text encodes through the byte-level fallback, ` +
          `${(pruned / full).toFixed(2)}× the tokens of Qwen3's full vocabulary, so rows cut at --max-seq-len lose their later turns` +
          (previous ? `; --vocab-search-tasks ${search.searchTasks} grows the vocabulary by the search text` : ''),
      );
    }
    if (kept === 0) {
      throw new Error(
        `--search-tasks ${search.searchTasks}: no search episode keeps 32 trained tokens within --max-seq-len ${options.maxSeqLen} (its prompt alone is longer); raise --max-seq-len`,
      );
    }
  }

  const config = ws.createWarmStartConfig(vocab.mapping.keptIds.length, presetConfig);
  if (flags['export-rows'] !== undefined) {
    const dir = path.resolve(ROOT, flags['export-rows']);
    const { packSftRows } = ws;
    const meta = {
      preset,
      seed: options.seed,
      maxSeqLen: options.maxSeqLen,
      trainWorlds: worldCount,
      categories,
      trainTasks: toolUseRowCount,
      searchTasks: rows.length - toolUseRowCount,
      vocabTasks: vocabTaskCount,
      vocabSearchTasks: search.vocabSearchTasks,
      keptTokens: vocab.mapping.keptIds.length,
      gitCommit: readGitCommit(),
    };
    const { gzipSync } = await import('node:zlib');
    const { formatQwen3ConfigJson, formatPrunedVocabJson } = await import('../src/model/weights/qwen3Folder');
    await writeFolderFiles(dir, {
      'rows.bin.gz': gzipSync(packSftRows(rows)),
      'rows.json': JSON.stringify(meta, null, 2) + '\n',
      'config.json': formatQwen3ConfigJson(config),
      'pruned_vocab.json': formatPrunedVocabJson(config, vocab.mapping),
    });
    console.log(`wrote ${rows.length} rows to ${dir} (rows.bin.gz, rows.json, config.json, pruned_vocab.json)`);
    executor.dispose?.();
    return;
  }
  let previousStage: import('../src/recipes/warmStart/index').WarmStartInfo | undefined;
  let model;
  if (previous && search.isVocabExtended) {
    const grown = ws.extendWarmStartVocab(previous, vocab.mapping, source);
    console.log(
      `vocabulary of --init ${flags.init} grown from ${previous.mapping.keptIds.length} to ${grown.mapping.keptIds.length} tokens (new rows: the mean of the rows that spelled them)`,
    );
    Object.assign(previous, grown);
  }
  if (previous) {
    if (JSON.stringify(previous.mapping.keptIds) !== JSON.stringify(vocab.mapping.keptIds)) {
      throw new Error(
        `--init ${flags.init}: its pruned_vocab.json differs from the vocabulary of seed ${options.seed} (${vocabTaskCount} tool-use tasks + ${search.vocabSearchTasks} search episodes)`,
      );
    }
    previousStage = previous.info;
    options.stage = (previous.info?.options.stage ?? 1) + (options.steps === 0 ? 0 : 1);
    model = Qwen3Model.fromTensors(previous.config, previous.tensors);
    console.log(`stage ${options.stage}: continuing ${flags.init} (${previous.info?.options.steps ?? '?'} steps)`);
  } else {
    model = Qwen3Model.fromConfig(config, options.seed);
  }
  console.log(`model: ${preset} with vocab_size ${config.vocab_size}, ${model.countParams()} parameters`);
  const t0 = Date.now();
  const losses = evalOnly
    ? []
    : await ws.runWarmStartSft(model, rows, options, (p) => {
        if (p.step % 10 === 0 || p.step === options.steps - 1) {
          console.log(
            `step ${p.step + 1}/${options.steps}  loss ${p.loss.toFixed(4)}  grad_norm ${p.gradNorm.toFixed(3)}  lr ${p.lr.toExponential(2)}  ${p.seconds.toFixed(0)} s`,
          );
        }
      });
  const trainSeconds = (Date.now() - t0) / 1000;

  const evalTasks = generateTasks({ seed: options.seed, split: 'test', n: evalTaskCount });
  const evalOptions = ws.DEFAULT_EVALUATE_OPTIONS;
  const t1 = Date.now();
  const { metrics, transcripts } = await ws.evaluateGreedy(
    model,
    vocab.tokenizer,
    evalTasks,
    { executor, renderChat: pv.bindRenderChat(source) },
    evalOptions,
  );
  console.log(
    `evaluation on ${metrics.nTasks} held-out tasks (${((Date.now() - t1) / 1000).toFixed(0)} s): ${JSON.stringify(metrics)}`,
  );
  for (const tr of transcripts.slice(0, 2)) {
    console.log(
      `sample episode (${tr.task.id}, answer ${JSON.stringify(tr.task.answer)}):\n${tr.turns
        .map((t) => t.assistantText)
        .join('\n---\n')
        .slice(0, 1500)}`,
    );
  }
  let searchEval: import('../src/recipes/warmStart/index').SearchWarmStartEval | undefined;
  if (search.searchEvalTasks > 0) {
    const heldOut = ws.generateSearchSftTasks(
      { seed: options.seed, n: search.searchEvalTasks, split: 'test' },
      searchRender,
    );
    const t2 = Date.now();
    searchEval = await ws.evaluateSearchGreedy(
      model,
      vocab.tokenizer,
      heldOut.tasks,
      ws.DEFAULT_SEARCH_EVALUATE_OPTIONS,
    );
    console.log(
      `search evaluation on ${searchEval.nTasks} held-out queries (${((Date.now() - t2) / 1000).toFixed(0)} s): ${JSON.stringify(searchEval)}`,
    );
  }

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  // Evaluation only (--init DIR --steps 0): DIR's own record stays the training record.
  const info =
    evalOnly && previousStage
      ? {
          ...previousStage,
          eval: metrics,
          ...(searchEval ? { searchEval } : {}),
          evalSettings: { split: 'test' as const, seed: options.seed, ...evalOptions },
          evalBackend: selection.backend,
          evalDate: new Date().toISOString(),
          evalGitCommit: readGitCommit(),
        }
      : {
          preset,
          options,
          trainWorlds: worldCount,
          trainTasks: toolUseRowCount,
          ...(search.searchTasks > 0 ? { searchTasks: rows.length - toolUseRowCount } : {}),
          ...(search.vocabSearchTasks > 0 ? { vocabSearchTasks: search.vocabSearchTasks } : {}),
          vocabTasks: vocabTaskCount,
          keptTokens: vocab.mapping.keptIds.length,
          ...(searchEval ? { searchEval } : {}),
          finalLoss: losses[losses.length - 1],
          lossStart: mean(losses.slice(0, 10)),
          lossEnd: mean(losses.slice(-10)),
          eval: metrics,
          previousStage,
          evalSettings: { split: 'test' as const, seed: options.seed, ...evalOptions },
          trainSeconds,
          backend: selection.backend,
          date: new Date().toISOString(),
          gitCommit: readGitCommit(),
        };
  await writeFolderFiles(outDir, await ws.exportWarmStartFiles(model, vocab.mapping, info));
  console.log(`wrote ${outDir}`);
  model.dispose();
  executor.dispose?.();
}

main().catch((e) => {
  console.error(`pretrain: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
