// The WebGPU adapter Dawn's Node binding finds here, as one JSON line (plain Node, no other
// package): {"loaded", "adapter": {vendor, architecture, device, description, isFallbackAdapter}
// | null, "features", "limits", "error"}. The module comes from $PACT_WEBGPU_MODULE (its
// index.js) or the package `webgpu`. Used by scripts/gpu/bench.sh before the benchmarks.
import { pathToFileURL } from 'node:url';

const out = { loaded: false, adapter: null };
try {
  const from = process.env.PACT_WEBGPU_MODULE;
  const { create, globals } = await import(from ? pathToFileURL(from).href : 'webgpu');
  Object.assign(globalThis, globals);
  out.loaded = true;
  const gpu = create([]);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (adapter) {
    const info = adapter.info ?? {};
    out.adapter = Object.fromEntries(
      ['vendor', 'architecture', 'device', 'description', 'isFallbackAdapter'].map((k) => [k, info[k]]),
    );
    out.features = [...adapter.features].sort();
    out.limits = {
      maxBufferSize: adapter.limits.maxBufferSize,
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    };
  }
} catch (e) {
  out.error = e instanceof Error ? e.message : String(e);
}
console.log(JSON.stringify(out));
process.exit(0);
