/**
 * The one typed message protocol between the page and the trainer worker
 * (STYLE.md habit 8): a single union per direction, request ids on every request,
 * and exhaustive `switch`es on both sides.
 *
 * Wired so far: the device probe and the numerics self-check; start/pause/resume/
 * step/stop, progress, metrics and rollout samples arrive with the trainer (issue 5).
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

/** Result of running the PyTorch reference fixtures on one backend. */
export interface NumericsReport {
  /** The backend that actually ran (may differ from the one asked for). */
  backend: BackendName;
  fallbackReason?: string;
  cases: {
    name: string;
    /** max |logit − ref| / max |ref| */
    logitsRelErr: number;
    /** worst checked weight: max |g − ref| / max(1, max |ref|) */
    gradMaxRelErr: number;
    isGreedyEqual: boolean;
    isPass: boolean;
  }[];
}

export type WorkerRequest =
  | { id: number; type: 'probe-device' }
  | { id: number; type: 'check-numerics'; backend: BackendName };

export type WorkerResponse =
  | { id: number; type: 'device'; report: DeviceReport }
  | { id: number; type: 'numerics'; report: NumericsReport }
  | { id: number; type: 'error'; message: string };

export type WorkerRequestType = WorkerRequest['type'];
