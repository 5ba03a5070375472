/**
 * The one typed message protocol between the page and the trainer worker
 * (STYLE.md habit 8): a single union per direction, request ids on every request,
 * and exhaustive `switch`es on both sides.
 *
 * Only the device probe is wired so far; start/pause/resume/step/stop, progress,
 * metrics and rollout samples arrive with the trainer (issue 5).
 */

export type BackendName = 'webgpu' | 'wasm' | 'cpu';

/** What the worker found when it looked for a device to train on. */
export interface DeviceReport {
  /** The backend training will use. */
  backend: BackendName;
  /** Why a faster backend was not chosen; absent when WebGPU was found. */
  fallbackReason?: string;
  adapter?: {
    vendor: string;
    architecture: string;
    device: string;
    description: string;
    isFallbackAdapter: boolean;
  };
  limits?: {
    maxBufferSize: number;
    maxStorageBufferBindingSize: number;
    maxComputeWorkgroupStorageSize: number;
  };
  wasm: { available: boolean; simd: boolean };
  hardwareConcurrency: number;
}

export type WorkerRequest = { id: number; type: 'probe-device' };

export type WorkerResponse =
  | { id: number; type: 'device'; report: DeviceReport }
  | { id: number; type: 'error'; message: string };

export type WorkerRequestType = WorkerRequest['type'];
