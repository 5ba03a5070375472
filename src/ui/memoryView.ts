/**
 * How the Device panel words the trainer's memory (workers/protocol.ts MemoryUsage), read
 * about once a second while a run is loaded: tfjs's live tensors, their peak in the current
 * step, the wasm backend's WebAssembly memory, and the process's where the browser offers it.
 * Binary units (1 KiB = 1024 B), since tfjs counts bytes of typed arrays and GPU buffers.
 */
import type { MemoryUsage } from '../../workers/protocol';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** 0 → "0 B", 1536 → "1.50 KiB", 25 MiB → "25.0 MiB", 300 MiB → "300 MiB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = value < 10 ? 2 : value < 100 ? 1 : 0;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** The lines the panel shows for one reading. */
export interface MemoryLines {
  /** "25.0 MiB in 312 tensors" */
  inUse: string;
  /** WebGPU only: "18.0 MiB in use · 24.0 MiB allocated (pooled)" */
  gpu: string | null;
  /** tfjs's caveat, when it gives one. */
  caveat: string | null;
  /** "peak 140 MiB in this step" */
  peak: string | null;
  /** "512 MiB of WebAssembly memory (grows as needed, never given back)" */
  wasmHeap: string | null;
  /** The CPU engine's buffers (where the model's activations live on wasm/cpu). */
  engine: string | null;
  /** The process's memory in words, or why it cannot be read here. */
  process: string;
  /** "read at 14:03:05" */
  sampledAt: string | null;
}

/** Why the process's memory is missing: what the browser would need to offer it. */
export const PROCESS_MEMORY_ABSENT =
  "not offered to the trainer's worker by this browser (measureUserAgentSpecificMemory needs cross-origin isolation and a browser that offers it to workers; performance.memory is Chromium-only)";

const timeFmt = new Intl.DateTimeFormat('en-GB', {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
  timeZone: 'UTC',
});

export function describeMemory(m: MemoryUsage): MemoryLines {
  const tensors = `${m.numTensors.toLocaleString('en-US')} tensor${m.numTensors === 1 ? '' : 's'}`;
  let gpu: string | null = null;
  if (m.numBytesInGPU !== undefined) {
    gpu = `${formatBytes(m.numBytesInGPU)} in use`;
    if (m.numBytesInGPUAllocated !== undefined) gpu += ` · ${formatBytes(m.numBytesInGPUAllocated)} allocated (pooled)`;
  }
  const process = m.process
    ? m.process.source === 'performance.memory'
      ? `${formatBytes(m.process.bytes)}: the trainer worker's JavaScript heap (performance.memory)`
      : `${formatBytes(m.process.bytes)}: this page with its workers (measureUserAgentSpecificMemory)`
    : PROCESS_MEMORY_ABSENT;
  return {
    inUse: `${formatBytes(m.numBytes)} in ${tensors} (${m.backend})`,
    gpu,
    caveat: m.unreliableReason ? `tfjs: ${m.unreliableReason}` : null,
    peak: m.peakBytes !== undefined ? `peak ${formatBytes(m.peakBytes)} in this step` : null,
    wasmHeap:
      m.wasmHeapBytes !== undefined
        ? `${formatBytes(m.wasmHeapBytes)} of WebAssembly memory (grows as needed, never given back)`
        : null,
    engine: m.engine
      ? `${formatBytes(m.engine.bytes)} in use · peak ${formatBytes(m.engine.peakBytes)} in this step · ${formatBytes(m.engine.memoryBytes)} of its WebAssembly memory`
      : null,
    process,
    sampledAt: m.sampledAt !== undefined ? `read at ${timeFmt.format(new Date(m.sampledAt))} UTC` : null,
  };
}
