/**
 * The device the trainer worker will use, as reactive state for the panels.
 * The probe runs in the worker (workers/deviceProbe.ts), not in the page.
 */
import { TrainerClient } from '../../../workers/client';
import type { BackendName, DeviceReport, NumericsReport } from '../../../workers/protocol';

export class DeviceState {
  report = $state<DeviceReport | null>(null);
  error = $state<string | null>(null);
  isProbing = $state(false);
  /** Reference-fixture checks run so far, newest last (one per backend asked). */
  numerics = $state<NumericsReport[]>([]);
  numericsError = $state<string | null>(null);
  checkingBackend = $state<BackendName | null>(null);
  private client: TrainerClient | null = null;

  /** The backend a run left on 'auto' trains on here: the probe's, but wasm over a software WebGPU adapter (tfBrowser.activateBackend). */
  autoBackend = $derived.by((): BackendName | null => {
    const r = this.report;
    if (!r) return null;
    return r.backend === 'webgpu' && r.adapter?.isFallbackAdapter ? (r.wasm.available ? 'wasm' : 'cpu') : r.backend;
  });

  /** One line a user can read at a glance (also what the e2e test reads). */
  summary = $derived.by(() => {
    const r = this.report;
    if (!r) return this.error ? `Device check failed: ${this.error}` : 'Checking for WebGPU…';
    if (r.backend === 'webgpu' && r.adapter) {
      const a = r.adapter;
      const name =
        [a.vendor, a.architecture || a.device || a.description].filter(Boolean).join(' · ') || 'unnamed adapter';
      return `WebGPU: ${name}${a.isFallbackAdapter ? ' (a software fallback adapter: correct but slower than wasm, so the auto backend trains on wasm)' : ''}`;
    }
    return r.backend === 'wasm'
      ? `WebAssembly${r.wasm.simd ? ' (SIMD)' : ''} on ${r.wasm.threads ? `${r.hardwareConcurrency} CPU thread(s)` : `1 of ${r.hardwareConcurrency} CPU thread(s) (this page is not cross-origin isolated)`}: no WebGPU`
      : 'Plain JavaScript (cpu): no WebGPU, no WebAssembly';
  });

  /** Runs the PyTorch reference fixtures through the model on `backend`, in the worker. */
  async checkNumerics(backend: BackendName): Promise<void> {
    if (!this.client) return;
    this.checkingBackend = backend;
    this.numericsError = null;
    try {
      const res = await this.client.request({ type: 'check-numerics', backend });
      if (res.type !== 'numerics') throw new Error(`unexpected reply "${res.type}" to check-numerics`);
      this.numerics = [...this.numerics.filter((r) => r.backend !== res.report.backend), res.report];
    } catch (e) {
      this.numericsError = e instanceof Error ? e.message : String(e);
    } finally {
      this.checkingBackend = null;
    }
  }

  async probe(client: TrainerClient): Promise<void> {
    this.client = client;
    this.isProbing = true;
    this.error = null;
    try {
      const res = await client.request({ type: 'probe-device' });
      if (res.type !== 'device') throw new Error(`unexpected reply "${res.type}" to probe-device`);
      this.report = res.report;
    } catch (e) {
      this.error = e instanceof Error ? e.message : String(e);
    } finally {
      this.isProbing = false;
    }
  }
}
