import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { repairThreadedFactory } from './crossOriginIsolation';

const require = createRequire(import.meta.url);
const FACTORY_FILE = require.resolve('@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.js');

/** Evaluates a CommonJS factory file as Node would and returns what it exports (the factory). */
function loadFactory(code: string): (...args: unknown[]) => unknown {
  const module = { exports: {} as unknown };
  vm.runInNewContext(code, { module, exports: module.exports, require, __filename: FACTORY_FILE, process, console });
  return module.exports as (...args: unknown[]) => unknown;
}

describe('repairThreadedFactory (tfjs-wasm threaded build)', () => {
  const original = readFileSync(FACTORY_FILE, 'utf8');
  const repaired = repairThreadedFactory(original);

  it('makes the factory text that tfjs hands to its pthread workers declare _scriptDir itself', () => {
    // tfjs: new Blob(['var WasmBackendModuleThreadedSimd = ' + factory.toString()]).
    const before = loadFactory(original).toString();
    const after = loadFactory(repaired).toString();
    expect(before).toContain('_scriptDir');
    expect(before).not.toMatch(/var _scriptDir\b/); // read from the closure: what the minifier broke
    expect(after).toMatch(/^function\(WasmBackendModuleThreadedSimd\) \{\n {2}var _scriptDir = /);
  });

  it('doubles the logical core count only where its C++ halves it, and changes nothing else', () => {
    expect(repaired).toContain(
      'function _emscripten_num_logical_cores(){if(ENVIRONMENT_IS_NODE)return require("os").cpus().length;return 2*navigator["hardwareConcurrency"]}',
    );
    expect(repaired.length).toBe(original.length + '2*'.length);
    const strip = (s: string) =>
      s
        .replace(/\s+/g, '')
        .replace('2*navigator', 'navigator')
        .replace(/var_scriptDir=[^;]*;if\(typeof__filename!=='undefined'\)_scriptDir=_scriptDir\|\|__filename;/, '');
    expect(strip(repaired)).toBe(strip(original));
  });

  it('refuses a file of another shape (a tfjs upgrade) instead of shipping a hanging backend', () => {
    expect(() => repairThreadedFactory('var WasmBackendModuleThreadedSimd = function() {};')).toThrow(
      /_scriptDir closure is not where this repair expects it/,
    );
    const withoutCores = original.replace('return navigator["hardwareConcurrency"]}', 'return 1}');
    expect(() => repairThreadedFactory(withoutCores)).toThrow(/_emscripten_num_logical_cores/);
  });
});
