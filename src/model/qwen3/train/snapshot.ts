/**
 * Weight snapshots and checkpoint serialisation.
 *
 * PACT Algorithm 1 keeps the reference policy π_ref (for the KL term) and the old policy
 * π_old (for the PPO ratios) as weight snapshots of the same network, not as re-loaded
 * models: `snapshotParams` copies a params Map into frozen (non-trainable) Variables that
 * the model's forward can take in place of the live params, `restoreParams` writes a
 * snapshot back, `disposeSnapshot` frees it. A snapshot costs no memory until the live
 * weight is updated: tfjs tensors share reference-counted storage, and an optimiser step
 * `assign`s a new buffer to the live Variable while the snapshot keeps the old one.
 *
 * Simplification: float32 only (what training keeps); other dtypes are rejected by name.
 *
 * Checkpoint serialisation: docs/model.md.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { NamedArray, ParamMap } from './types';

/** Frozen copies (non-trainable Variables) of every tensor in `params`, by the same names. */
export function snapshotParams(params: ReadonlyMap<string, tf.Tensor>): ParamMap {
  const snapshot: ParamMap = new Map();
  for (const [name, tensor] of params) {
    if (tensor.isDisposed) throw new Error(`snapshotParams: "${name}" is disposed`);
    snapshot.set(name, tf.variable(tensor, false)); // shares storage with `tensor` (refcounted)
  }
  return snapshot;
}

/**
 * Assigns each snapshot tensor to the live Variable of the same name. The snapshot must
 * hold exactly the names of `params`, with the same shapes and dtypes; everything is
 * checked before anything is written. The snapshot stays valid (and owned by the caller).
 */
export function restoreParams(params: ParamMap, snapshot: ReadonlyMap<string, tf.Tensor>): void {
  for (const [name, param] of params) {
    const saved = snapshot.get(name);
    if (saved === undefined) throw new Error(`restoreParams: snapshot has no tensor "${name}"`);
    if (saved.isDisposed) throw new Error(`restoreParams: snapshot tensor "${name}" is disposed`);
    if (!tf.util.arraysEqual(saved.shape, param.shape) || saved.dtype !== param.dtype) {
      throw new Error(
        `restoreParams: "${name}" is ${saved.dtype} [${saved.shape}] in the snapshot but ${param.dtype} [${param.shape}] in params`,
      );
    }
  }
  for (const name of snapshot.keys()) {
    if (!params.has(name)) throw new Error(`restoreParams: snapshot tensor "${name}" has no param of that name`);
  }
  for (const [name, param] of params) param.assign(snapshot.get(name)!);
}

/** Frees every tensor of a snapshot (or any Map of tensors the caller owns). */
export function disposeSnapshot(snapshot: ReadonlyMap<string, tf.Tensor>): void {
  for (const tensor of snapshot.values()) tensor.dispose();
}

/** Reads every tensor into a plain record (a copy of its data), in the Map's order. */
export async function exportTensors(tensors: ReadonlyMap<string, tf.Tensor>): Promise<NamedArray[]> {
  const entries = [...tensors];
  for (const [name, tensor] of entries) {
    if (tensor.dtype !== 'float32') throw new Error(`exportTensors: "${name}" has dtype ${tensor.dtype}; only float32`);
  }
  const datas = await Promise.all(entries.map(([, tensor]) => tensor.data()));
  return entries.map(([name, tensor], i) => ({
    name,
    shape: [...tensor.shape],
    data: Float32Array.from(datas[i] as Float32Array), // copy: the cpu backend returns its own buffer
  }));
}

/** New float32 tensors from plain records (caller disposes). Duplicate names and bad sizes are errors. */
export function importTensors(records: readonly NamedArray[]): Map<string, tf.Tensor> {
  const seen = new Set<string>();
  records.forEach((record, i) => {
    checkRecord(record, `importTensors: records[${i}]`);
    if (seen.has(record.name)) throw new Error(`importTensors: duplicate name "${record.name}" at records[${i}]`);
    seen.add(record.name);
  });
  return new Map(records.map((r) => [r.name, tf.tensor(r.data, r.shape, 'float32')]));
}

/**
 * Writes plain records into the Variables of the same names (a checkpoint restore).
 * With `isPartial` false (default) every param must have a record; a record with no param
 * is always an error. Everything is checked before anything is written.
 */
export function assignNamedArrays(params: ParamMap, records: readonly NamedArray[], isPartial = false): void {
  const byName = new Map<string, NamedArray>();
  records.forEach((record, i) => {
    checkRecord(record, `assignNamedArrays: records[${i}]`);
    if (byName.has(record.name)) throw new Error(`assignNamedArrays: duplicate name "${record.name}" at records[${i}]`);
    const param = params.get(record.name);
    if (param === undefined) throw new Error(`assignNamedArrays: record "${record.name}" has no param of that name`);
    if (!tf.util.arraysEqual(record.shape, param.shape)) {
      throw new Error(
        `assignNamedArrays: "${record.name}" has shape [${record.shape}] but the param has [${param.shape}]`,
      );
    }
    if (param.dtype !== 'float32')
      throw new Error(`assignNamedArrays: param "${record.name}" has dtype ${param.dtype}`);
    byName.set(record.name, record);
  });
  if (!isPartial) {
    for (const name of params.keys()) {
      if (!byName.has(name)) throw new Error(`assignNamedArrays: no record for param "${name}"`);
    }
  }
  for (const [name, record] of byName) {
    tf.tidy(() => params.get(name)!.assign(tf.tensor(record.data, record.shape, 'float32')));
  }
}

function checkRecord(record: NamedArray, where: string): void {
  if (record === null || typeof record !== 'object' || typeof record.name !== 'string' || record.name === '') {
    throw new Error(`${where}: must be {name, shape, data} with a non-empty name`);
  }
  const { name, shape, data } = record;
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new Error(
      `${where} ("${name}"): shape must be a list of non-negative integers, got ${JSON.stringify(shape)}`,
    );
  }
  if (!(data instanceof Float32Array)) throw new Error(`${where} ("${name}"): data must be a Float32Array`);
  const size = shape.reduce((a, b) => a * b, 1);
  if (data.length !== size) {
    throw new Error(`${where} ("${name}"): shape [${shape}] needs ${size} values, data has ${data.length}`);
  }
}
