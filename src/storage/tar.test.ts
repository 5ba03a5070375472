import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  TAR_BLOCK,
  TAR_RECORD,
  TarError,
  appendTarChunks,
  buildTarHeader,
  looksLikeTar,
  readTar,
  writeTar,
  writeTarChunks,
} from './tar';

const text = (s: string) => new TextEncoder().encode(s);
const ascii = (b: Uint8Array, from: number, len: number) => String.fromCharCode(...b.subarray(from, from + len));

/** GNU tar, the independent reference; absent on a machine without it (the hand-computed tests still run). */
function findGnuTar(): boolean {
  try {
    return execFileSync('tar', ['--version'], { encoding: 'utf8' }).includes('GNU tar');
  } catch {
    return false;
  }
}
const hasGnuTar = findGnuTar();
const scratch = mkdtempSync(path.join(tmpdir(), 'pact-tar-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('ustar header, by hand', () => {
  it('writes every field of "ck/a.txt" (6 bytes, mtime 0) and its checksum', () => {
    const h = buildTarHeader('ck/a.txt', 6);
    expect(h.length).toBe(512);
    expect(ascii(h, 0, 9)).toBe('ck/a.txt\0');
    expect(ascii(h, 100, 8)).toBe('0000644\0');
    expect(ascii(h, 108, 8)).toBe('0000000\0');
    expect(ascii(h, 116, 8)).toBe('0000000\0');
    expect(ascii(h, 124, 12)).toBe('00000000006\0');
    expect(ascii(h, 136, 12)).toBe('00000000000\0');
    expect(ascii(h, 156, 1)).toBe('0');
    expect(ascii(h, 257, 8)).toBe('ustar\x0000');
    expect(ascii(h, 329, 16)).toBe('0000000\x000000000\0');
    // chksum = byte sum with the field as 8 spaces:
    //   name  c k / a . t x t = 99+107+47+97+46+116+120+116 = 748
    //   mode  0000644 = 4·48 + 54 + 52 + 52 = 350;  uid, gid 0000000 = 7·48 = 336 each
    //   size  00000000006 = 10·48 + 54 = 534;        mtime 11·48 = 528
    //   chksum 8·32 = 256; typeflag '0' = 48; magic u s t a r = 117+115+116+97+114 = 559
    //   version 00 = 96; devmajor, devminor 336 each
    //   748+350+336+336+534+528+256+48+559+96+336+336 = 4463 = 0o10557
    expect(ascii(h, 148, 8)).toBe('010557\0 ');
    // Every other byte is zero.
    const used = new Set<number>();
    for (const [from, len] of [
      [0, 8],
      [100, 7],
      [108, 7],
      [116, 7],
      [124, 11],
      [136, 11],
      [148, 8],
      [156, 1],
      [257, 5],
      [263, 2],
      [329, 7],
      [337, 7],
    ]) {
      for (let i = from; i < from + len; i++) used.add(i);
    }
    expect([...h].every((b, i) => used.has(i) || b === 0)).toBe(true);
  });

  it('splits a path over 100 bytes at a "/" into prefix + name', () => {
    const long = `${'d'.repeat(60)}/${'e'.repeat(50)}/f.json`; // 60 + 1 + 50 + 7 = 118 bytes
    const h = buildTarHeader(long, 0);
    expect(ascii(h, 345, 112).replace(/\0+$/, '')).toBe(`${'d'.repeat(60)}/${'e'.repeat(50)}`);
    expect(ascii(h, 0, 100).replace(/\0+$/, '')).toBe('f.json');
    expect(() => buildTarHeader(`${'x'.repeat(101)}`, 0)).toThrow('too long for a ustar header');
    expect(() => buildTarHeader('../etc/passwd', 0)).toThrow('must be relative');
  });

  it('pads data to 512 bytes and the archive to a 10240-byte record', () => {
    const bytes = writeTar([{ name: 'a', data: text('x'.repeat(513)) }]);
    // header 512 + data 513 → 1024 + end 1024 = 2560 → one record of 10240
    expect(bytes.length).toBe(TAR_RECORD);
    expect(bytes[512 + 512]).toBe('x'.charCodeAt(0));
    expect(bytes[512 + 513]).toBe(0);
    const chunks = writeTarChunks([{ name: 'a', data: text('x'.repeat(513)) }]);
    expect(chunks.map((c) => c.length)).toEqual([512, 513, 511, TAR_RECORD - 1536]);
    expect(() =>
      writeTar([
        { name: 'a', data: text('1') },
        { name: 'a', data: text('2') },
      ]),
    ).toThrow('two entries are named "a"');
  });
});

describe.skipIf(!hasGnuTar)('against GNU tar (the independent reference)', () => {
  const files: [string, Uint8Array][] = [
    ['ckpt/config.json', text('{"vocab_size": 7}\n')],
    ['ckpt/empty.bin', new Uint8Array(0)],
    ['ckpt/block.bin', new Uint8Array(512).map((_, i) => (i * 7) & 255)],
    [`ckpt/${'n'.repeat(70)}/${'m'.repeat(60)}.json`, text('[1,2,3]')],
  ];

  it('our archive is byte for byte what `tar --format=ustar` writes for the same files', () => {
    const dir = path.join(scratch, 'ref');
    for (const [name, data] of files) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), data);
    }
    const mtime = 1_764_500_000;
    execFileSync('tar', [
      '--format=ustar',
      '--numeric-owner',
      '--owner=0',
      '--group=0',
      '--mode=0644',
      `--mtime=@${mtime}`,
      '--no-recursion',
      '-C',
      dir,
      '-cf',
      path.join(scratch, 'ref.tar'),
      ...files.map(([n]) => n),
    ]);
    const reference = new Uint8Array(readFileSync(path.join(scratch, 'ref.tar')));
    const ours = writeTar(
      files.map(([name, data]) => ({ name, data })),
      { mtimeSeconds: mtime },
    );
    expect(ours.length).toBe(reference.length);
    expect(Buffer.from(ours).equals(Buffer.from(reference))).toBe(true);
    // …and GNU tar lists and extracts ours.
    writeFileSync(path.join(scratch, 'ours.tar'), ours);
    const listed = execFileSync('tar', ['-tf', path.join(scratch, 'ours.tar')], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(listed).toEqual(files.map(([n]) => n));
    const out = path.join(scratch, 'x');
    mkdirSync(out);
    execFileSync('tar', ['-xf', path.join(scratch, 'ours.tar'), '-C', out]);
    expect(readFileSync(path.join(out, 'ckpt/config.json'), 'utf8')).toBe('{"vocab_size": 7}\n');
  });

  it('reads what GNU tar writes in its default, pax and ustar formats, skipping directories', () => {
    const dir = path.join(scratch, 'src');
    const deep = `${'p'.repeat(120)}/${'q'.repeat(150)}.json`; // 271 bytes: GNU 'L' / pax 'x' path, not ustar
    mkdirSync(path.join(dir, 'ck', 'p'.repeat(120)), { recursive: true });
    writeFileSync(path.join(dir, 'ck', 'a.txt'), 'hello\n');
    writeFileSync(path.join(dir, 'ck', deep), '{"deep":true}');
    for (const format of ['gnu', 'pax']) {
      const tarPath = path.join(scratch, `${format}.tar`);
      execFileSync('tar', [`--format=${format}`, '-C', dir, '-cf', tarPath, 'ck']);
      const entries = readTar(new Uint8Array(readFileSync(tarPath)));
      const byName = new Map(entries.map((e) => [e.name, new TextDecoder().decode(e.data)]));
      expect([...byName.keys()].sort()).toEqual(['ck/a.txt', `ck/${deep}`]);
      expect(byName.get('ck/a.txt')).toBe('hello\n');
      expect(byName.get(`ck/${deep}`)).toBe('{"deep":true}');
    }
    // A symlink is refused by name, not followed.
    symlinkSync('a.txt', path.join(dir, 'ck', 'link'));
    execFileSync('tar', ['--format=ustar', '-C', dir, '-cf', path.join(scratch, 'link.tar'), 'ck/link']);
    expect(() => readTar(new Uint8Array(readFileSync(path.join(scratch, 'link.tar'))))).toThrow(
      `"ck/link" is a symbolic link (to "a.txt"); links are refused`,
    );
  });

  it("an entry's own mode (an executable script) is written as GNU tar writes that file's mode, and extracted with it", () => {
    const dir = path.join(scratch, 'modes');
    const modes: [string, string, number][] = [
      ['job/launch.sh', '#!/usr/bin/env bash\necho hi\n', 0o755],
      ['job/run_config.json', '{"seed": 1}\n', 0o644],
    ];
    for (const [name, body, mode] of modes) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), body);
      chmodSync(path.join(dir, name), mode);
    }
    const mtime = 1_764_500_000;
    const refPath = path.join(scratch, 'modes-ref.tar');
    execFileSync('tar', [
      '--format=ustar',
      '--numeric-owner',
      '--owner=0',
      '--group=0',
      `--mtime=@${mtime}`,
      '--no-recursion',
      '-C',
      dir,
      '-cf',
      refPath,
      ...modes.map(([n]) => n),
    ]);
    // launch.sh's own mode; the other entry takes the archive's default, 0644.
    const ours = writeTar(
      modes.map(([name, body, mode]) => ({ name, data: text(body), ...(mode === 0o755 ? { mode } : {}) })),
      { mtimeSeconds: mtime },
    );
    expect(Buffer.from(ours).equals(readFileSync(refPath))).toBe(true);
    expect(ascii(ours, 100, 8)).toBe('0000755\0');
    const oursPath = path.join(scratch, 'modes-ours.tar');
    writeFileSync(oursPath, ours);
    const out = path.join(scratch, 'modes-x');
    mkdirSync(out);
    execFileSync('tar', ['-xf', oursPath, '-C', out]);
    expect(statSync(path.join(out, 'job/launch.sh')).mode & 0o777).toBe(0o755 & ~process.umask());
    expect(statSync(path.join(out, 'job/run_config.json')).mode & 0o111).toBe(0);
  });
});

describe('reading', () => {
  const archive = writeTar(
    [
      { name: 'run/trainer_state.json', data: text('{"step":1}') },
      { name: 'run/model.safetensors', data: new Uint8Array(700).fill(3) },
    ],
    { mtimeSeconds: 5 },
  );

  it('round-trips names and bytes', () => {
    expect(looksLikeTar(archive)).toBe(true);
    const back = readTar(archive);
    expect(back.map((e) => e.name)).toEqual(['run/trainer_state.json', 'run/model.safetensors']);
    expect(new TextDecoder().decode(back[0].data)).toBe('{"step":1}');
    expect(back[1].data.length).toBe(700);
    expect(back[1].data.every((b) => b === 3)).toBe(true);
  });

  it('appending entries to written chunks gives the archive written with them all, byte for byte', () => {
    const first = [
      { name: 'run/a.txt', data: text('a'.repeat(700)) },
      { name: 'run/b.bin', data: new Uint8Array(512).fill(1) },
    ];
    const more = [{ name: 'run/metrics.jsonl', data: text('{"step":1}\n'.repeat(1000)) }];
    const chunks = writeTarChunks(first, { mtimeSeconds: 9 });
    const appended = appendTarChunks(chunks, ['run/a.txt', 'run/b.bin'], more, { mtimeSeconds: 9 });
    const joined = new Uint8Array(appended.reduce((s, c) => s + c.length, 0));
    appended.reduce((at, c) => (joined.set(c, at), at + c.length), 0);
    expect(joined).toEqual(writeTar([...first, ...more], { mtimeSeconds: 9 }));
    expect(joined.length % TAR_RECORD).toBe(0);
    expect(appended[0]).toBe(chunks[0]); // shared, not copied
    expect(() => appendTarChunks(chunks, ['run/a.txt'], [{ name: 'run/a.txt', data: text('x') }])).toThrow(
      'tar: two entries are named "run/a.txt"',
    );
    expect(() => appendTarChunks(chunks.slice(0, -1), [], more)).toThrow('does not end with its end-of-archive blocks');
  });

  it('a damaged header, a truncated archive and a non-tar file each get an error that says so', () => {
    const damaged = archive.slice();
    damaged[TAR_BLOCK + 512 + 3] ^= 1; // a byte of the 2nd header's name (after header 1 + its 1 data block)
    expect(() => readTar(damaged)).toThrow(/entry at byte 1024: header checksum \d+ does not match/);
    expect(() => readTar(archive.subarray(0, 1024 + 512 + 100))).toThrow(
      '"run/model.safetensors" says it holds 700 bytes but the archive ends 100 bytes after its header',
    );
    const random = new Uint8Array(2048).map((_, i) => (i * 31 + 7) & 255);
    expect(looksLikeTar(random)).toBe(false);
    expect(() => readTar(random)).toThrow(TarError);
    expect(() => readTar(random)).toThrow('not a tar archive, or a damaged one');
    expect(() => readTar(text('short'))).toThrow('shorter than one 512-byte tar header');
  });
});
