/**
 * How the Device panel words the trainer's memory (workers/protocol.ts MemoryUsage):
 * binary units (1 KiB = 1024 B), since tfjs counts bytes of typed arrays and GPU buffers.
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
}

export function describeMemory(m: MemoryUsage): MemoryLines {
  const tensors = `${m.numTensors.toLocaleString('en-US')} tensor${m.numTensors === 1 ? '' : 's'}`;
  let gpu: string | null = null;
  if (m.numBytesInGPU !== undefined) {
    gpu = `${formatBytes(m.numBytesInGPU)} in use`;
    if (m.numBytesInGPUAllocated !== undefined) gpu += ` · ${formatBytes(m.numBytesInGPUAllocated)} allocated (pooled)`;
  }
  return {
    inUse: `${formatBytes(m.numBytes)} in ${tensors} (${m.backend})`,
    gpu,
    caveat: m.unreliableReason ? `tfjs: ${m.unreliableReason}` : null,
  };
}
