/**
 * Node-only helpers (fs, path, module): the wasm file location for tfjs-backend-wasm
 * and the reader of the PyTorch reference fixtures written by
 * scripts/reference/qwen3_reference.py. Never imported by the browser/worker code.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseReferenceFixture, type ReferenceFixture } from './referenceCheck';

/** Folder (with trailing slash) holding tfjs-backend-wasm's .wasm files, for selectBackend's wasmPaths. */
export function getNodeWasmPaths(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + '/';
}

/** Reads NAME.json + NAME.bin (little-endian float32) from `dir`. */
export function readReferenceFixture(dir: string, name: string): ReferenceFixture {
  const manifest = JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8')) as unknown;
  return parseReferenceFixture(manifest, readFileSync(path.join(dir, `${name}.bin`)));
}
