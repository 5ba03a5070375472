/**
 * Room for a run's checkpoints in the browser's storage, checked before the run starts. The app
 * saves a checkpoint after every step and keeps the newest `keepLast`, writing the next one before
 * it prunes the oldest (db.ts saveCheckpoint), so a run needs room for keepLast + 1 of them at
 * once, less those of the run already stored (a resumed run's own count in the usage). The
 * origin's quota and usage come from navigator.storage.estimate(), which browsers round; a save
 * that still fails stops the run with a StorageQuotaError, and nothing saved is lost.
 */
import { formatBytes } from './db';

/** Checkpoints the app keeps of a run (older ones pruned after each save; workers/trainingSession.ts). */
export const APP_CHECKPOINTS_KEPT = 2;

export interface StorageEstimateLike {
  /** Bytes this origin may store. */
  quota: number;
  /** Bytes it stores now. */
  usage: number;
}

export interface CheckpointRoom {
  /** Bytes of one checkpoint of the run. */
  checkpointBytes: number;
  /** Checkpoints the store keeps of a run. */
  keepLast: number;
  /** Checkpoints of this run stored already (a resumed run's), each counted in the usage. */
  stored: number;
}

/** navigator.storage.estimate() where the browser offers it (page or worker), else null. */
export async function readStorageEstimate(): Promise<StorageEstimateLike | null> {
  const storage = (globalThis.navigator as { storage?: StorageManager } | undefined)?.storage;
  if (typeof storage?.estimate !== 'function') return null;
  const { quota, usage } = await storage.estimate();
  return quota === undefined || usage === undefined ? null : { quota, usage };
}

/** Bytes a run still needs beyond what its stored checkpoints take: (keepLast + 1 − stored) checkpoints, at least one. */
export function checkpointRoomNeeded(room: CheckpointRoom): number {
  const more = Math.max(1, room.keepLast + 1 - room.stored);
  return more * room.checkpointBytes;
}

/**
 * Throws, before anything is trained, when the origin's free storage cannot hold the run's
 * checkpoints: how much they need, how much is free, and what to do. `what` says what a
 * checkpoint holds ("1,820,352 parameters: the weights, π_ref's copy and AdamW's moments"). Quota and usage that are not finite numbers are not checked.
 */
export function checkCheckpointRoom(estimate: StorageEstimateLike, room: CheckpointRoom, what: string): void {
  const { quota, usage } = estimate;
  if (!Number.isFinite(quota) || !Number.isFinite(usage) || quota <= 0) return;
  const free = Math.max(0, quota - usage);
  const needed = checkpointRoomNeeded(room);
  if (needed <= free) return;
  const more = needed / room.checkpointBytes;
  throw new Error(
    `not enough browser storage for this run's checkpoints: the app saves one after every step ` +
      `(${formatBytes(room.checkpointBytes)} for ${what}), keeps ` +
      `the last ${room.keepLast} and writes the next before it deletes the oldest, so it needs ` +
      `${formatBytes(needed)} more (${more} × ${formatBytes(room.checkpointBytes)}), and this site has ` +
      `${formatBytes(free)} free of the ${formatBytes(quota)} the browser allows it (${formatBytes(usage)} in use). ` +
      'Delete saved runs you no longer need (Runs panel; export a checkpoint first to keep it), free disk space ' +
      '(the browser sizes the quota from it), or train a smaller model; nothing was started and nothing saved was lost',
  );
}
