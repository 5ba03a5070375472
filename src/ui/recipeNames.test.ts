import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RECIPE_NAMES } from './recipeNames';

/**
 * The files a module's static value imports reach (relative imports followed, `import type`
 * skipped), and the bare packages they name: what the page bundle gets from it.
 */
function collectStaticImports(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.includes(file)) continue;
    files.push(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm)) {
      const [, isType, spec] = m;
      if (isType) continue;
      if (!spec.startsWith('.')) {
        packages.add(spec);
        continue;
      }
      const base = path.resolve(path.dirname(file), spec);
      if (spec.endsWith('.json') && existsSync(base)) continue; // data: imports nothing
      const resolved = [`${base}.ts`, base, path.join(base, 'index.ts')].find(
        (f) => existsSync(f) && f.endsWith('.ts'),
      );
      if (!resolved) throw new Error(`${file}: cannot resolve ${spec}`);
      pending.push(resolved);
    }
  }
  return { files, packages };
}

describe('recipe dropdown', () => {
  it('offers exactly the recipes the full recipes index registers, in its order', async () => {
    const { listRecipes } = await import('../recipes');
    expect(RECIPE_NAMES).toEqual(listRecipes());
    expect(RECIPE_NAMES).toContain('pact');
  });

  it('reads the registry without reaching tfjs or the model (it is in the page bundle)', () => {
    const { files, packages } = collectStaticImports(fileURLToPath(new URL('./recipeNames.ts', import.meta.url)));
    expect(files.some((f) => f.endsWith(path.join('recipes', 'allRecipes.ts')))).toBe(true);
    expect([...packages].filter((p) => p.startsWith('@tensorflow/'))).toEqual([]);
    expect(files.filter((f) => f.includes(`${path.sep}model${path.sep}`))).toEqual([]);
    // The walk does see tfjs where it is: through the full index (the Trainer).
    const viaIndex = collectStaticImports(fileURLToPath(new URL('../recipes/index.ts', import.meta.url)));
    expect([...viaIndex.packages].some((p) => p.startsWith('@tensorflow/'))).toBe(true);
  });
});
