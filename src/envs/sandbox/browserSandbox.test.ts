/**
 * The tool sandbox frame's policy, read from the file the app serves: its one inline script
 * is the one the CSP hash allows (an edit that forgets the hash would leave the frame dead),
 * and nothing in the policy lets the frame or its workers connect anywhere. The frame in a
 * real browser: e2e/toolSandbox.spec.ts.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const html = readFileSync(new URL('../../../public/tool-sandbox.html', import.meta.url), 'utf8');

function readPolicy(): Map<string, string[]> {
  const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html);
  if (!meta) throw new Error('no CSP meta tag in tool-sandbox.html');
  const policy = new Map<string, string[]>();
  for (const part of meta[1].split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) policy.set(name, values);
  }
  return policy;
}

describe('public/tool-sandbox.html', () => {
  it('allows exactly its own inline script, by hash', () => {
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    expect(scripts).toHaveLength(1);
    expect(html).not.toMatch(/<script[^>]+src=/);
    const hash = `'sha256-${createHash('sha256').update(scripts[0], 'utf8').digest('base64')}'`;
    expect(readPolicy().get('script-src')).toEqual([hash, "'unsafe-eval'"]);
  });

  it('forbids every connection: default-src none, no connect-src, workers only from blob:', () => {
    const policy = readPolicy();
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.has('connect-src')).toBe(false);
    expect(policy.get('worker-src')).toEqual(['blob:']);
    expect([...policy.keys()].sort()).toEqual(['base-uri', 'default-src', 'form-action', 'script-src', 'worker-src']);
  });
});
