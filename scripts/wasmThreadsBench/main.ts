/**
 * The page of scripts/wasmThreadsBench.ts: runs the benchmark worker once per engine kernel build
 * and thread count asked in the URL (`?threads=1,4&kernels=simd,fma&spec=<JSON BenchSpec>`), a
 * fresh worker each time (tfjs-wasm reads its thread count once, when the backend starts), and
 * leaves the results as JSON in `window.benchResults` and in the page.
 */
import type { BenchResult, BenchSpec } from './bench.worker';
import type { KernelVariant } from '../../src/model/engine/kernelChoice';

declare global {
  interface Window {
    benchResults?:
      { crossOriginIsolated: boolean; hardwareConcurrency: number; runs: BenchResult[] } | { error: string };
  }
}

function runOnce(spec: BenchSpec): Promise<BenchResult> {
  const worker = new Worker(new URL('./bench.worker.ts', import.meta.url), { type: 'module' });
  return new Promise<BenchResult>((resolve, reject) => {
    worker.onmessage = (ev: MessageEvent<BenchResult | { error: string }>) => {
      worker.terminate();
      if ('error' in ev.data) reject(new Error(ev.data.error));
      else resolve(ev.data);
    };
    worker.onerror = (ev) => reject(new Error(ev.message || 'worker error'));
    worker.postMessage(spec);
  });
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const spec = JSON.parse(params.get('spec') ?? '{}') as Omit<BenchSpec, 'threads' | 'kernels'>;
  const kernelsAsked = (params.get('kernels') ?? 'simd').split(',') as KernelVariant[];
  const threadsParam = params.get('threads');
  if (!threadsParam) return; // a visit that only reads navigator.hardwareConcurrency
  const threadCounts = threadsParam.split(',').map(Number);
  const runs: BenchResult[] = [];
  for (const kernels of kernelsAsked)
    for (const threads of threadCounts) runs.push(await runOnce({ ...spec, threads, kernels }));
  window.benchResults = { crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency, runs };
}

main()
  .then(() => undefined)
  .catch((e: unknown) => {
    window.benchResults = { error: e instanceof Error ? e.message : String(e) };
  })
  .finally(() => {
    document.getElementById('out')!.textContent = JSON.stringify(window.benchResults, null, 2);
  });
