/**
 * tfjs backends inside the browser worker: the wasm binaries come from the
 * package itself (bundled by Vite with `?url`, fetched from this origin; nothing
 * from the internet), then `selectBackend` picks webgpu → wasm → cpu.
 */
import wasmUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimdUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreadedSimdUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';
import { selectBackend, type BackendPreference, type BackendSelection } from '../src/model/backend';

export const WASM_PATHS: Record<string, string> = {
  'tfjs-backend-wasm.wasm': wasmUrl,
  'tfjs-backend-wasm-simd.wasm': wasmSimdUrl,
  'tfjs-backend-wasm-threaded-simd.wasm': wasmThreadedSimdUrl,
};

/** Activates `preferred` (or the next working backend; 'auto': no software WebGPU) and says which one and why. */
export function activateBackend(preferred: BackendPreference): Promise<BackendSelection> {
  return selectBackend(preferred, { wasmPaths: WASM_PATHS });
}
