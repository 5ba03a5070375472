/**
 * Whether the backend chosen in Run setup can run in this browser, read from the device
 * probe's report before Train is pressed (the worker would otherwise fall back only after).
 */
import type { DeviceReport } from '../../workers/protocol';

/** A sentence saying why `choice` cannot train here, or null when it can (or the probe has not answered). */
export function describeBackendProblem(choice: string, report: DeviceReport | null): string | null {
  if (!report) return null;
  if (choice === 'webgpu' && !report.adapter) {
    const why = report.fallbackReason ? ` (${report.fallbackReason})` : '';
    return `backend webgpu: this browser offers no WebGPU adapter${why}, so the run would fall back to wasm; choose auto or wasm`;
  }
  if (choice === 'wasm' && !report.wasm.available) {
    return 'backend wasm: this browser has no WebAssembly, so the run would fall back to cpu; choose auto or cpu';
  }
  return null;
}
