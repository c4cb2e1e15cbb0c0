/**
 * Sharding of a property run over several machines (`make properties-nightly SHARD=i/N`, a CI matrix).
 *
 * A shard runs every property with its own part of the property's runs and its own seed derived from the base seed
 * and its index, so that N shards together do the unsharded budget once: the parts add up to the whole, and no two
 * shards start from the same seed (fast-check draws each run from its seed, so distinct seeds give distinct runs).
 */

/** Shard `index` (1-based) of `count`. */
export interface Shard {
  index: number;
  count: number;
}

/** The whole run: one shard of one. */
export const WHOLE: Shard = { index: 1, count: 1 };

/** Parses `i/N` (1 ≤ i ≤ N); an empty or missing value is the whole run. Throws on anything else. */
export function parseShard(text: string | undefined): Shard {
  if (text === undefined || text === "") return WHOLE;
  const match = /^([0-9]+)\/([0-9]+)$/.exec(text.trim());
  if (match === null) throw new Error(`SHARD must look like i/N (e.g. 1/4), got ${JSON.stringify(text)}`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || count > 1000) throw new Error(`SHARD ${text}: N must be between 1 and 1000`);
  if (index < 1 || index > count) throw new Error(`SHARD ${text}: i must be between 1 and ${count}`);
  return { index, count };
}

/**
 * The runs shard `shard` does of a property whose whole budget is `total` runs: the parts of all shards differ by
 * at most one and add up to `total` exactly (so a shard of a tiny budget may get none).
 */
export function shardRuns(total: number, shard: Shard): number {
  const upTo = (index: number) => Math.floor((total * index) / shard.count);
  return upTo(shard.index) - upTo(shard.index - 1);
}

/**
 * The seed of shard `shard` for base seed `base`: the base itself for the whole run (so a plain run replays with the
 * printed seed), otherwise a 32-bit mix of both that differs for every index.
 */
export function shardSeed(base: number, shard: Shard): number {
  if (shard.count === 1) return base | 0;
  // splitmix32-style finalizer over base and index: distinct indexes give distinct seeds for the same base
  // (the mix is a bijection of the 32-bit sum, and the sums differ for indexes below 2^32 / golden ratio step).
  let x = (base + Math.imul(shard.index, 0x9e3779b9)) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) | 0;
}

/** How the shard is named in logs and the replay command. */
export function shardLabel(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}
