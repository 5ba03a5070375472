/**
 * tfjs backends inside the browser worker: the wasm binaries come from the
 * package itself (bundled by Vite with `?url`, fetched from this origin; nothing
 * from the internet), then `selectBackend` picks webgpu → wasm → cpu. The app is
 * cross-origin isolated (scripts/crossOriginIsolation.ts), so wasm runs its threaded
 * SIMD build, on every core unless told otherwise.
 */
import wasmUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimdUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreadedSimdUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';
import { configureEngineThreads } from '../src/model/engine/runtime';
import { selectBackend, type BackendPreference, type BackendSelection } from '../src/model/backend';

export const WASM_PATHS: Record<string, string> = {
  'tfjs-backend-wasm.wasm': wasmUrl,
  'tfjs-backend-wasm-simd.wasm': wasmSimdUrl,
  'tfjs-backend-wasm-threaded-simd.wasm': wasmThreadedSimdUrl,
};

/** Every logical core this browser reports (tfjs's own default would use half, at most 4). */
export function countCores(): number {
  return typeof navigator !== 'undefined' && navigator.hardwareConcurrency > 0 ? navigator.hardwareConcurrency : 1;
}

/**
 * Activates `preferred` (or the next working backend; 'auto': no software WebGPU) and says which
 * one and why. `wasmThreads` (default: every core) takes effect when wasm first starts in this
 * worker; on wasm and cpu the CPU engine gets as many threads (cross-origin isolation permitting).
 */
export async function activateBackend(
  preferred: BackendPreference,
  opts: { wasmThreads?: number } = {},
): Promise<BackendSelection & { engineThreads?: number; engineThreadsReason?: string }> {
  const threads = opts.wasmThreads ?? countCores();
  const selection = await selectBackend(preferred, { wasmPaths: WASM_PATHS, wasmThreads: threads });
  if (selection.backend === 'webgpu') return selection;
  const engine = await configureEngineThreads(threads);
  return { ...selection, engineThreads: engine.threads, engineThreadsReason: engine.reason };
}
