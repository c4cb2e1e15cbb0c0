/**
 * The reference `NodeFileWatcher`: Durable's watcher (1.0.4+), reimplemented rule by rule from the facts in
 * `spec/semantics.md` §12 (WA rules) — the oracle of every watch test.
 *
 * How it works: a watcher keeps a snapshot (absolute path → identity, size, mtime) of everything it covers. Native
 * `fs.watch` events only trigger a debounced rescan; the changes it reports are the difference between two snapshots
 * plus the (relevant) event paths. In polling mode a timer rescans instead. Coverage is established before `open`
 * returns, so a change made after `watch` resolved is never missed while the watcher is healthy.
 */
import { createHash } from "node:crypto";
import type { FSWatcher, Stats } from "node:fs";
import { watch as nativeWatch } from "node:fs";
import { lstat, readdir, readFile, stat, statfs } from "node:fs/promises";
import { dirname, sep } from "node:path";
import { FileError } from "./errors.js";
import type { FileWatcher, WatchChange, WatchTarget } from "./types.js";

/** Watch options of the reference env (Durable's `NodeWatchOptions`). */
export interface NodeWatchOptions {
  /** Forces a mode; otherwise WA3 chooses. */
  mode?: "native" | "polling";
  /** Time between the end of one polling rescan and the start of the next, in ms (a Node timer delay). */
  pollIntervalMs?: number;
  /** Most directories one watcher covers; 0 refuses every directory target. */
  maxDirectories?: number;
}

/** WA rules' constants (semantics §18). */
const DEBOUNCE_MS = 50;
const FSEVENTS_SETTLE_MS = 500;
const DEFAULT_POLL_MS = 2000;
const DEFAULT_MAX_DIRECTORIES = 10_000;
const HASH_MAX_BYTES = 256 * 1024;
const HASH_RECENT_MS = 5000;
const SYNC_ROUNDS = 10;

/** WA3: `statfs` magic numbers of file systems whose native events cannot be trusted (network, FUSE, 9P …). */
const UNRELIABLE_FILE_SYSTEMS: ReadonlySet<number> = new Set([
  0x6969, // NFS
  0x517b, // SMB
  0xff534d42, // CIFS
  0xfe534d42, // SMB2
  0x65735546, // FUSE (sshfs, Android shared storage)
  0x01021997, // 9P (WSL2 Windows drives)
  0x0bd00bd0, // Lustre
  0x47504653, // GPFS
  0x00c36400, // Ceph
  0x5346414f, // OpenAFS
  0x6b414653, // kAFS
  0x5dca2df5, // sdcardfs
]);

type EntryKind = "file" | "directory" | "symlink" | "other";

/** What a snapshot knows about one path. Directories compare by identity only (size and mtime are 0). */
interface Entry {
  kind: EntryKind;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  /** Polling mode only: SHA-256 of a small, recently modified regular file. */
  hash?: string;
}

/** One scan's result. */
interface Snapshot {
  entries: Map<string, Entry>;
  /** Targets that are regular files reached through a symbolic link (WA6). */
  linkedFiles: Set<string>;
}

/** A target after resolution (WA2). */
interface Target {
  path: string;
  recursive: boolean;
  hidden: boolean;
  names: ReadonlySet<string>;
}

/** A native watcher we installed, with the identity of the entry it was installed on (WA8). */
interface Installed {
  watcher: FSWatcher;
  dev: number;
  ino: number;
}

function nodeCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function isPermissionError(error: unknown): boolean {
  const code = nodeCode(error);
  return code === "EACCES" || code === "EPERM";
}

function kindOf(stats: Stats): EntryKind {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  return "other";
}

/** `path` and every ancestor of it, nearest first, up to the root (`/` gives just `/`). */
function withAncestors(path: string): string[] {
  const chain = [path];
  for (let current = path, parent = dirname(path); parent !== current; current = parent, parent = dirname(parent)) {
    chain.push(parent);
  }
  return chain;
}

/** Whether `path` is `base` or lies below it. */
function atOrBelow(path: string, base: string): boolean {
  return path === base || isBelow(path, base);
}

/** Whether `path` lies strictly below `base`. */
function isBelow(path: string, base: string): boolean {
  const prefix = base.endsWith(sep) ? base : base + sep;
  return path.length > prefix.length && path.startsWith(prefix);
}

/** `dir` + separator + `name` (the root does not double its separator). */
function childPath(dir: string, name: string): string {
  return dir.endsWith(sep) ? dir + name : dir + sep + name;
}

function isExcluded(target: Target, name: string): boolean {
  return (target.hidden && name.startsWith(".")) || target.names.has(name);
}

function sameEntry(a: Entry, b: Entry): boolean {
  return (
    a.kind === b.kind &&
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.hash === b.hash
  );
}

/** The error over the directory budget (WA5), with the exact message Durable uses. */
function budgetError(maxDirectories: number): FileError {
  return new FileError("invalid", `Watched paths exceed ${maxDirectories} directories`);
}

/** WA3: whether any target (or its nearest existing ancestor) sits on a file system listed above (Linux only). */
async function onUnreliableFileSystem(targets: readonly Target[]): Promise<boolean> {
  if (process.platform !== "linux" && process.platform !== "android") return false;
  for (const target of targets) {
    for (const path of withAncestors(target.path)) {
      let type: number;
      try {
        type = (await statfs(path)).type;
      } catch {
        continue;
      }
      if (UNRELIABLE_FILE_SYSTEMS.has(type >>> 0)) return true;
      break;
    }
  }
  return false;
}

/**
 * Durable's `NodeFileWatcher`. Create one with {@link NodeFileWatcher.open}; `mode` is the current mode (native
 * watching falls back to polling when the system runs out of watches, WA10).
 */
export class NodeFileWatcher implements FileWatcher {
  #mode: "native" | "polling";
  readonly #targets: readonly Target[];
  readonly #onChange: (change: WatchChange) => void;
  readonly #pollIntervalMs: number;
  readonly #maxDirectories: number;
  #snapshot: Snapshot = { entries: new Map(), linkedFiles: new Set() };
  readonly #installed = new Map<string, Installed>();
  /** Paths of native events not flushed yet (already mapped through `reported`). */
  #pendingEvents = new Set<string>();
  /** The one timer slot: the debounce timer in native mode, the poll timer in polling mode. */
  #timer: NodeJS.Timeout | undefined;
  /** macOS only: the settle rescan after installing watchers. */
  #settleTimer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #dirty = false;
  #closed = false;
  /** Resolves when `open`'s first sync is over; flushes wait for it so two syncs never interleave. */
  #opened: Promise<void> = Promise.resolve();

  private constructor(
    targets: readonly Target[],
    mode: "native" | "polling",
    onChange: (change: WatchChange) => void,
    options: NodeWatchOptions,
  ) {
    this.#targets = targets;
    this.#mode = mode;
    this.#onChange = onChange;
    this.#pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;
    this.#maxDirectories = options.maxDirectories ?? DEFAULT_MAX_DIRECTORIES;
  }

  /**
   * WA2–WA4: resolves the targets, chooses the mode and establishes coverage (one sync without reporting) before
   * returning. Throws the budget `FileError` or the Node error that made coverage impossible (the env maps it).
   */
  static async open(
    targets: readonly WatchTarget[],
    resolve: (path: string) => string,
    onChange: (change: WatchChange) => void,
    options: NodeWatchOptions = {},
  ): Promise<NodeFileWatcher> {
    const resolved = targets.map(
      (target): Target => ({
        path: resolve(target.path),
        recursive: target.recursive === true,
        hidden: target.exclude?.hidden === true,
        names: new Set(target.exclude?.names ?? []),
      }),
    );
    const mode =
      options.mode ?? (process.platform === "win32" || (await onUnreliableFileSystem(resolved)) ? "polling" : "native");
    const watcher = new NodeFileWatcher(resolved, mode, onChange, options);
    const opening = watcher.#sync(false);
    watcher.#opened = opening.then(
      () => undefined,
      () => undefined,
    );
    try {
      await opening;
    } catch (error) {
      watcher.#stop();
      throw error;
    }
    if (watcher.#mode === "polling" && watcher.#timer === undefined) watcher.#armPoll();
    return watcher;
  }

  /** The current mode. */
  get mode(): "native" | "polling" {
    return this.#mode;
  }

  /** WA13: stops everything, then waits for a running rescan; no `onChange` call starts afterwards. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#stop();
    await this.#flushing;
  }

  #stop(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#settleTimer);
    this.#timer = undefined;
    this.#settleTimer = undefined;
    for (const { watcher } of this.#installed.values()) watcher.close();
    this.#installed.clear();
  }

  /** WA12: calls `onChange` unless closed; whatever it throws is swallowed. */
  #deliver(change: WatchChange): void {
    if (this.#closed) return;
    try {
      this.#onChange(change);
    } catch {
      // The caller's exception must not stop watching.
    }
  }

  /** WA7: rescans until no new native watcher was added (at most 10 rounds); returns the reported paths. */
  async #sync(reportFirst: boolean): Promise<Set<string>> {
    const changed = new Set<string>();
    let report = reportFirst;
    for (let round = 0; round < SYNC_ROUNDS && !this.#closed; round++) {
      const next = await this.#scan();
      if (this.#closed) break;
      if (report) for (const path of this.#diff(this.#snapshot, next)) changed.add(path);
      this.#snapshot = next;
      if (this.#mode === "polling") break;
      const added = this.#reconcileWatchers();
      if (!added) break;
      if (process.platform === "darwin") this.#armSettle();
      // Something written into a new directory before its watcher existed shows up in the next round.
      report = true;
    }
    return changed;
  }

  /** WA4–WA6: a fresh snapshot of every target, in target order. */
  async #scan(): Promise<Snapshot> {
    const entries = new Map<string, Entry>();
    const linkedFiles = new Set<string>();
    /** Kinds of paths listed in this scan (by lstat), so a path listed twice is lstat'ed once. */
    const listed = new Map<string, EntryKind>();
    /** (target index, directory) pairs already scanned. */
    const scanned = new Set<string>();
    /** Directories counted toward the budget. */
    const counted = new Set<string>();
    const count = (dir: string): void => {
      counted.add(dir);
      if (counted.size > this.#maxDirectories) throw budgetError(this.#maxDirectories);
    };

    const scanDir = async (index: number, target: Target, dir: string): Promise<void> => {
      const key = `${index}\0${dir}`;
      if (scanned.has(key)) return;
      scanned.add(key);
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (dir === target.path && isPermissionError(error)) throw error;
        const code = nodeCode(error);
        if (code === "ENOENT" || code === "EACCES" || code === "EPERM" || code === "ENOTDIR") return;
        throw error;
      }
      for (const name of names) {
        if (isExcluded(target, name)) continue;
        const path = childPath(dir, name);
        let kind = listed.get(path);
        if (kind === undefined) {
          let stats: Stats;
          try {
            stats = await lstat(path);
          } catch {
            continue;
          }
          kind = kindOf(stats);
          listed.set(path, kind);
          if (!entries.has(path)) entries.set(path, await this.#entry(path, stats));
        }
        if (target.recursive && kind === "directory") {
          count(path);
          await scanDir(index, target, path);
        }
      }
    };

    for (const [index, target] of this.#targets.entries()) {
      for (const ancestor of withAncestors(target.path).slice(1)) {
        if (entries.has(ancestor)) continue;
        try {
          const stats = await lstat(ancestor);
          entries.set(ancestor, { kind: kindOf(stats), dev: stats.dev, ino: stats.ino, size: 0, mtimeMs: 0 });
        } catch {
          // A missing or unreadable ancestor is simply not recorded.
        }
      }
      let stats: Stats;
      try {
        stats = await stat(target.path);
      } catch (error) {
        if (isPermissionError(error)) throw error;
        continue; // Missing: watched for its creation.
      }
      // A target's own (followed) entry wins over what another target's listing recorded.
      entries.set(target.path, await this.#entry(target.path, stats));
      if (stats.isFile()) {
        try {
          if ((await lstat(target.path)).isSymbolicLink()) linkedFiles.add(target.path);
        } catch {
          // Gone between stat and lstat: the next scan sees it.
        }
      }
      if (stats.isDirectory()) {
        count(target.path);
        await scanDir(index, target, target.path);
      }
    }
    return { entries, linkedFiles };
  }

  /** WA4: the snapshot entry of `path`; in polling mode small recent files also get a content hash. */
  async #entry(path: string, stats: Stats): Promise<Entry> {
    const kind = kindOf(stats);
    const directory = kind === "directory";
    const entry: Entry = {
      kind,
      dev: stats.dev,
      ino: stats.ino,
      size: directory ? 0 : stats.size,
      mtimeMs: directory ? 0 : stats.mtimeMs,
    };
    if (
      this.#mode === "polling" &&
      kind === "file" &&
      stats.size <= HASH_MAX_BYTES &&
      Date.now() - stats.mtimeMs < HASH_RECENT_MS
    ) {
      try {
        entry.hash = createHash("sha256")
          .update(await readFile(path))
          .digest("hex");
      } catch {
        // Unreadable: compared without a hash.
      }
    }
    return entry;
  }

  /** WA7: paths new or changed in `next`, then paths gone from it, each mapped through `reported`. */
  #diff(previous: Snapshot, next: Snapshot): string[] {
    const paths: string[] = [];
    for (const [path, entry] of next.entries) {
      const before = previous.entries.get(path);
      if (before === undefined || !sameEntry(before, entry)) paths.push(this.#reported(path));
    }
    for (const path of previous.entries.keys()) {
      if (!next.entries.has(path)) paths.push(this.#reported(path));
    }
    return paths;
  }

  /**
   * WA7: a path at or below a target is reported as itself; an ancestor as the first target below it (an ancestor
   * that changed identity moved the targets below it); anything else as itself.
   */
  #reported(path: string): string {
    if (this.#targets.some((target) => atOrBelow(path, target.path))) return path;
    const below = this.#targets.find((target) => isBelow(target.path, path));
    return below === undefined ? path : below.path;
  }

  /** WA8: installs the native watchers the snapshot needs and drops stale ones; returns whether any was added. */
  #reconcileWatchers(): boolean {
    const entries = this.#snapshot.entries;
    const linkedFiles = this.#snapshot.linkedFiles;
    const wanted = new Map<string, boolean>();
    for (const path of linkedFiles) wanted.set(path, false);
    for (const target of this.#targets) {
      for (const ancestor of withAncestors(target.path).slice(1)) {
        if (entries.get(ancestor)?.kind === "directory") wanted.set(ancestor, false);
      }
    }
    const perDirectory = process.platform === "linux" || process.platform === "android";
    for (const target of this.#targets) {
      if (entries.get(target.path)?.kind !== "directory") continue;
      if (!perDirectory) {
        wanted.set(target.path, target.recursive);
        continue;
      }
      wanted.set(target.path, false);
      if (!target.recursive) continue;
      for (const [path, entry] of entries) {
        if (entry.kind === "directory" && isBelow(path, target.path)) wanted.set(path, false);
      }
    }

    for (const [path, installed] of this.#installed) {
      const entry = entries.get(path);
      if (!wanted.has(path) || entry === undefined || entry.dev !== installed.dev || entry.ino !== installed.ino) {
        installed.watcher.close();
        this.#installed.delete(path);
      }
    }

    let added = false;
    for (const [path, recursive] of wanted) {
      if (this.#closed || this.#mode === "polling") break;
      const entry = entries.get(path);
      if (entry === undefined || this.#installed.has(path)) continue;
      let watcher: FSWatcher;
      try {
        watcher = nativeWatch(path, { recursive, persistent: false });
      } catch (error) {
        const code = nodeCode(error);
        if (code === undefined || code === "ENOENT" || code === "EACCES" || code === "EPERM") continue;
        this.#switchToPolling();
        break;
      }
      const installed: Installed = { watcher, dev: entry.dev, ino: entry.ino };
      const linked = linkedFiles.has(path);
      watcher.on("change", (_event, filename) => this.#onEvent(path, linked, filename));
      watcher.on("error", () => {
        watcher.close();
        if (this.#installed.get(path) === installed) this.#installed.delete(path);
        this.#scheduleFlush();
      });
      this.#installed.set(path, installed);
      added = true;
    }
    return added;
  }

  /** WA10: native watching failed unexpectedly: poll from now on and report an overflow. */
  #switchToPolling(): void {
    this.#mode = "polling";
    for (const { watcher } of this.#installed.values()) watcher.close();
    this.#installed.clear();
    this.#deliver({ overflow: true });
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armPoll();
  }

  /** WA9: a native event from the watcher on `watched`; only events that matter schedule a rescan. */
  #onEvent(watched: string, linked: boolean, filename: string | Buffer | null): void {
    if (this.#closed) return;
    if (linked) {
      this.#pendingEvents.add(watched);
      this.#scheduleFlush();
      return;
    }
    if (filename === null || filename === undefined) {
      this.#scheduleFlush();
      return;
    }
    const path = childPath(watched, filename.toString());
    if (!this.#relevant(path)) return;
    this.#pendingEvents.add(this.#reported(path));
    this.#scheduleFlush();
  }

  /** WA9: a target, an ancestor of one, or an entry the target covers that no exclusion hides. */
  #relevant(path: string): boolean {
    return this.#targets.some((target) => {
      if (path === target.path || isBelow(target.path, path)) return true;
      if (!isBelow(path, target.path)) return false;
      const components = path.slice(target.path.length).split(sep).filter(Boolean);
      if (!target.recursive && components.length !== 1) return false;
      return !components.some((name) => isExcluded(target, name));
    });
  }

  /** WA9: leading-edge debounce: the first event of a burst arms a 50 ms timer, later ones do not extend it. */
  #scheduleFlush(): void {
    if (this.#closed || this.#mode === "polling" || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#flush();
    }, DEBOUNCE_MS);
    this.#timer.unref();
  }

  /** WA9: the next polling rescan, `pollIntervalMs` after the previous one ended. */
  #armPoll(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(async () => {
      await this.#flush();
      this.#timer = undefined;
      if (this.#mode === "polling") this.#armPoll();
    }, this.#pollIntervalMs);
    this.#timer.unref();
  }

  /** WA9: macOS only: FSEvents misses changes made right after `fs.watch` returns, so rescan once 500 ms later. */
  #armSettle(): void {
    clearTimeout(this.#settleTimer);
    this.#settleTimer = setTimeout(() => {
      this.#settleTimer = undefined;
      void this.#flush();
    }, FSEVENTS_SETTLE_MS);
    this.#settleTimer.unref();
  }

  /**
   * WA9/WA11: rescans and delivers `{paths}` (sorted, unique) while something asked for another round; a failure is
   * delivered as `{error}` and stops the watcher for good.
   */
  #flush(): Promise<void> {
    if (this.#flushing !== undefined) {
      this.#dirty = true;
      return this.#flushing;
    }
    this.#flushing = this.#runFlush().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #runFlush(): Promise<void> {
    await this.#opened;
    try {
      do {
        this.#dirty = false;
        const events = this.#pendingEvents;
        this.#pendingEvents = new Set();
        const changed = await this.#sync(true);
        for (const path of events) changed.add(path);
        if (changed.size > 0) this.#deliver({ paths: [...changed].sort() });
      } while (this.#dirty && !this.#closed);
    } catch (error) {
      this.#deliver({ error: watchError(error) });
      this.#stop();
    }
  }
}

/** WA11: what a failure after open is delivered as: a FileError as is, else `permission_denied` or `invalid`. */
function watchError(error: unknown): FileError {
  if (error instanceof FileError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FileError(isPermissionError(error) ? "permission_denied" : "invalid", message);
}
