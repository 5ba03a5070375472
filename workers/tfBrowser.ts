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
import { selectBackend, type BackendName, type BackendSelection } from '../src/model/backend';

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
 * Activates `preferred` (or the next working backend) and says which one and why.
 * `wasmThreads` (default: every core) takes effect when wasm first starts in this worker.
 */
export function activateBackend(preferred: BackendName, opts: { wasmThreads?: number } = {}): Promise<BackendSelection> {
  return selectBackend(preferred, { wasmPaths: WASM_PATHS, wasmThreads: opts.wasmThreads ?? countCores() });
}
