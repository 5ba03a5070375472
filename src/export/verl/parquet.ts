/**
 * Parquet files of a VeRL export, written with hyparquet-writer under an explicit nested
 * schema: `prompt` / `messages` as a LIST of {role, content} structs, `reward_model` and
 * `extra_info` as structs, so that `datasets.load_dataset("parquet")` hands VeRL's
 * RLHFDataset a list of message dicts and dict fields, as it expects.
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { SftRow, VerlRow } from './rows';

type SchemaElement = NonNullable<Parameters<typeof parquetWriteBuffer>[0]['schema']>[number];

const str = (name: string): SchemaElement => ({
  name,
  type: 'BYTE_ARRAY',
  converted_type: 'UTF8',
  repetition_type: 'REQUIRED',
});
const int = (name: string): SchemaElement => ({ name, type: 'INT64', repetition_type: 'REQUIRED' });
const dbl = (name: string): SchemaElement => ({ name, type: 'DOUBLE', repetition_type: 'REQUIRED' });

function messageList(name: string): SchemaElement[] {
  return [
    { name, repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
    str('role'),
    str('content'),
  ];
}

/** The extra_info fields in schema order, with their parquet type. */
export const EXTRA_INFO_FIELDS: readonly [string, 'string' | 'int' | 'double'][] = [
  ['split', 'string'],
  ['index', 'int'],
  ['task_id', 'string'],
  ['category', 'string'],
  ['step', 'int'],
  ['position', 'int'],
  ['pact_gate', 'int'],
  ['lambda_a', 'double'],
  ['prefix_level', 'int'],
  ['tools', 'string'],
  ['implementations', 'string'],
  ['tool_timeout_ms', 'int'],
  ['expert_trace', 'string'],
];

const RL_SCHEMA: SchemaElement[] = [
  { name: 'root', num_children: 5 },
  str('data_source'),
  ...messageList('prompt'),
  str('ability'),
  { name: 'reward_model', repetition_type: 'REQUIRED', num_children: 2 },
  str('style'),
  str('ground_truth'),
  { name: 'extra_info', repetition_type: 'REQUIRED', num_children: EXTRA_INFO_FIELDS.length },
  ...EXTRA_INFO_FIELDS.map(([name, kind]) => (kind === 'string' ? str(name) : kind === 'int' ? int(name) : dbl(name))),
];

const SFT_SCHEMA: SchemaElement[] = [
  { name: 'root', num_children: 3 },
  ...messageList('messages'),
  str('tools_json'),
  str('task_id'),
];

/** The RL rows as a parquet file's bytes. */
export function writeRlParquet(rows: readonly VerlRow[]): ArrayBuffer {
  const extra = rows.map((r) => {
    const out: Record<string, unknown> = {};
    for (const [name, kind] of EXTRA_INFO_FIELDS) {
      const v = (r.extra_info as unknown as Record<string, unknown>)[name];
      out[name] = kind === 'int' ? BigInt(v as number) : v;
    }
    return out;
  });
  return parquetWriteBuffer({
    schema: RL_SCHEMA,
    columnData: [
      { name: 'data_source', data: rows.map((r) => r.data_source) },
      { name: 'prompt', data: rows.map((r) => r.prompt) },
      { name: 'ability', data: rows.map((r) => r.ability) },
      { name: 'reward_model', data: rows.map((r) => r.reward_model) },
      { name: 'extra_info', data: extra },
    ],
  });
}

/** The SFT rows as a parquet file's bytes. */
export function writeSftParquet(rows: readonly SftRow[]): ArrayBuffer {
  return parquetWriteBuffer({
    schema: SFT_SCHEMA,
    columnData: [
      { name: 'messages', data: rows.map((r) => r.messages) },
      { name: 'tools_json', data: rows.map((r) => r.tools_json) },
      { name: 'task_id', data: rows.map((r) => r.task_id) },
    ],
  });
}

/** JSON lines of the same rows (VeRL's RLHFDataset also reads `.json` files through `datasets`). */
export function formatJsonLines(rows: readonly object[]): string {
  return rows
    .map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)) + '\n')
    .join('');
}
