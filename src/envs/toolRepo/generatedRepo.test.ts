import { describe, expect, it } from 'vitest';
import { GENERATED_CATEGORIES, generateToolRepo } from './generatedRepo';
import type { ToolDocument } from './types';

const repo = generateToolRepo({ seed: 7 });

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

describe('generateToolRepo', () => {
  it('is deterministic by seed', () => {
    const again = generateToolRepo({ seed: 7 });
    expect(JSON.stringify(again)).toBe(JSON.stringify(repo));
    const other = generateToolRepo({ seed: 8 });
    expect(other.tools.map((t) => t.id)).not.toEqual(repo.tools.map((t) => t.id));
  });

  it('has at least 10,000 uniquely named tools over the 49 categories', () => {
    expect(GENERATED_CATEGORIES.length).toBe(49);
    expect(repo.tools.length).toBeGreaterThanOrEqual(10_000);
    // The last provider may overshoot by at most 5 APIs (3–6 APIs per provider).
    expect(repo.tools.length).toBeLessThan(10_006);
    expect(new Set(repo.tools.map((t) => t.id)).size).toBe(repo.tools.length);
    expect(repo.categories).toEqual([...GENERATED_CATEGORIES].sort());
    // Providers are assigned round-robin over categories, so each holds about 10,000/49 ≈ 204 APIs.
    for (const [, docs] of groupBy(repo.tools, (t) => t.category)) {
      expect(docs.length).toBeGreaterThan(150);
      expect(docs.length).toBeLessThan(260);
    }
  });

  it('groups APIs into providers (RapidAPI tools) of 3–6 APIs in one category', () => {
    for (const [, docs] of groupBy(repo.tools, (t) => t.toolName)) {
      expect(docs.length).toBeGreaterThanOrEqual(3);
      expect(docs.length).toBeLessThanOrEqual(6);
      expect(new Set(docs.map((d) => d.category)).size).toBe(1);
    }
  });

  it('has families of functionally similar APIs from different providers with different interfaces', () => {
    const families = [...groupBy(repo.tools, (t) => t.family!).values()];
    const shared = families.filter((docs) => new Set(docs.map((d) => d.toolName)).size >= 2);
    // 49 categories × 8 subjects × 8 actions = 3,136 possible families for ~10,000 APIs: most are shared.
    expect(shared.length).toBeGreaterThan(1500);
    const interfaceOf = (d: ToolDocument) =>
      JSON.stringify([d.requiredParameters.map((p) => p.name).sort(), Object.keys(d.outputs ?? {}).sort()]);
    const withDistinctInterfaces = shared.filter((docs) => new Set(docs.map(interfaceOf)).size >= 2);
    expect(withDistinctInterfaces.length / shared.length).toBeGreaterThan(0.95);
    // Near-duplicate descriptions: members of a family share the subject in their description.
    const [sample] = shared;
    const subject = sample[0].family!.split('/')[1];
    for (const doc of sample) expect(doc.description.toLowerCase()).toContain(subject.split(' ')[0]);
  });

  it('builds collections spanning 2–4 categories', () => {
    expect(repo.collections.length).toBe(60);
    const categoryOf = new Map(repo.tools.map((t) => [t.toolName, t.category]));
    for (const c of repo.collections) {
      expect(c.categories.length).toBeGreaterThanOrEqual(2);
      expect(c.categories.length).toBeLessThanOrEqual(4);
      expect(new Set(c.toolNames.map((n) => categoryOf.get(n))).size).toBe(c.categories.length);
    }
  });

  it('writes queries at three levels whose gold sets follow the level definitions', () => {
    const byId = new Map(repo.tools.map((t) => [t.id, t]));
    const byLevel = groupBy(repo.queries, (q) => q.level);
    expect([...byLevel.keys()].sort()).toEqual(['intra_category', 'intra_collection', 'single_tool']);
    for (const [, queries] of byLevel) expect(queries.length).toBe(100);
    for (const q of repo.queries) {
      const gold = q.goldToolIds.map((id) => byId.get(id)!);
      expect(gold.every((d) => d !== undefined)).toBe(true);
      const providers = new Set(gold.map((d) => d.toolName));
      const categories = new Set(gold.map((d) => d.category));
      expect(q.goldCategories).toEqual([...categories].sort());
      if (q.level === 'single_tool') {
        expect(providers.size).toBe(1);
        expect(gold.length).toBeGreaterThanOrEqual(1);
        expect(gold.length).toBeLessThanOrEqual(3);
      } else if (q.level === 'intra_category') {
        expect(providers.size).toBe(gold.length);
        expect(gold.length).toBeGreaterThanOrEqual(2);
        expect(categories.size).toBe(1);
      } else {
        expect(providers.size).toBe(gold.length);
        expect(categories.size).toBeGreaterThanOrEqual(2);
        expect(repo.collections.some((c) => gold.every((d) => c.toolNames.includes(d.toolName)))).toBe(true);
      }
    }
  });

  it('never names a gold tool, provider or API in the query text', () => {
    const byId = new Map(repo.tools.map((t) => [t.id, t]));
    for (const q of repo.queries) {
      const text = q.text.toLowerCase();
      for (const id of q.goldToolIds) {
        const doc = byId.get(id)!;
        const brand = doc.toolName.split(' ')[0].toLowerCase();
        expect(text).not.toContain(doc.toolName.toLowerCase());
        expect(text).not.toContain(doc.name);
        expect(text).not.toContain(doc.apiName.toLowerCase());
        expect(text.split(/[^a-z0-9]+/)).not.toContain(brand);
      }
    }
  });

  it('honours smaller settings', () => {
    const small = generateToolRepo({ seed: 1, minTools: 200, categories: 5, collections: 4, queriesPerLevel: 3 });
    expect(small.categories).toEqual([...GENERATED_CATEGORIES.slice(0, 5)].sort());
    expect(small.tools.length).toBeGreaterThanOrEqual(200);
    expect(small.tools.length).toBeLessThan(206);
    expect(small.collections.length).toBe(4);
    expect(small.queries.length).toBe(9);
  });
});
