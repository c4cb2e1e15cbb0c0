/**
 * Types of the conformance suite. The suite depends only on the `ExecutionEnv` contract (types from
 * `@outpost/sdk`) and on `node:assert`, never on a test runner, so anyone writing an env can run it.
 */
import type { ExecutionEnv } from "@outpost/sdk";

/** One runnable check of the contract. `run` rejects (throws) when the env under test breaks the rule. */
export interface ConformanceCase {
  /** A sentence saying what the env must do. Unique within the suite. */
  name: string;
  /** Rule ids of `spec/semantics.md` (space separated) this case checks. */
  rule?: string;
  /** Time the case may take; a runner should use it as the test timeout. */
  timeoutMs?: number;
  /** Why the case does not apply to this target (e.g. the env has no `listFiles`); a runner reports it skipped. */
  skip?: string;
  /**
   * The case needs a target user that file permissions apply to (`ConformanceOptions.permissions`): a runner
   * that runs as root can select these cases to run them again as an unprivileged user.
   */
  permissions?: true;
  /** Runs the case. */
  run(): Promise<void>;
}

/** What the target env supports, plus how to get one. */
export interface ConformanceOptions {
  /**
   * Calls `use` once with an env whose `cwd` is a fresh, empty, writable, absolute directory, and removes the
   * directory afterwards. Called once per case. `settings` are the env's construction options some exec cases
   * need (a custom shell, a `shellEnv`); a target must honour them.
   */
  withEnv(use: (env: ExecutionEnv) => Promise<void>, settings?: EnvSettings): Promise<void>;
  /** Program and flag that run a POSIX script given as the next argument. Default `["sh", "-c"]`. */
  shell?: readonly [string, string];
  /** Whether `ln -s` makes symbolic links on the target. Default true. */
  symlinks?: boolean;
  /** Whether `mkfifo` works and `/dev/null` exists on the target. Default true. */
  fifos?: boolean;
  /** Whether the target's file system accepts file names that are not UTF-8 (Linux: yes, macOS: no). Default true. */
  nonUtf8Names?: boolean;
  /**
   * Whether the target is Linux: `/proc`, signal numbers (SIGKILL 9, SIGINT 2), `/bin/bash` as the shell.
   * Cases tagged Linux-only are left out otherwise. Default true.
   */
  linux?: boolean;
  /** Scale of the large-file cases in MiB (at least 20 to cross every chunk size). Default 20. */
  largeFileMiB?: number;
  /**
   * Whether the env has Outpost's `listFiles` (spec/semantics.md §19; the reference has not). Without it the
   * `listFiles` cases are skipped — reported by name, never passed. Default false.
   */
  listFiles?: boolean;
  /**
   * Whether the env has Outpost's `searchFiles` (spec/semantics.md §23; the reference has not). Without it the
   * `searchFiles` cases are skipped, by name. Default: as `listFiles` (the agents that list also search).
   */
  searchFiles?: boolean;
  /**
   * Whether the target is Windows: paths are built with `path.win32`, and cases whose expectations are
   * POSIX-only are switched to the Windows rule they test (or left out, by that rule). Default false.
   */
  windows?: boolean;
  /**
   * Whether file permissions apply to the target's user — it is not root, so `chmod 000` denies it. The cases
   * that need a denied permission (marked `permissions`) are skipped without it — reported by name — and fail
   * when the target turns out to be root. Default false.
   */
  permissions?: boolean;
}

/** Construction options of an env that exec cases vary. */
export interface EnvSettings {
  /** The env's `shellPath` option. */
  shellPath?: string;
  /** The env's `shellEnv` option. */
  shellEnv?: Record<string, string | undefined>;
  /** The env's `watch` option (watch cases force a mode, a poll interval and a directory budget). */
  watch?: WatchSettings;
}

/** Watcher options of an env (Durable's `NodeWatchOptions`); `undefined` fields take the env's defaults. */
export interface WatchSettings {
  mode?: "native" | "polling";
  pollIntervalMs?: number;
  maxDirectories?: number;
}

/** The three functions `registerConformance` needs from a vitest/jest-like runner. */
export interface TestRunner {
  describe(title: string, body: () => void): void;
  it: ((name: string, body: () => Promise<void>, timeoutMs?: number) => void) & {
    /** Registers a case that is reported as skipped (vitest's and jest's `it.skip`). */
    skip?: (name: string, body: () => Promise<void>) => void;
  };
  /** Accepted so `{describe, it, expect}` can be passed as is; the cases use `node:assert` instead. */
  expect?: unknown;
}

/** Options after defaults are applied; what every case module receives. */
export interface Setup {
  withEnv(use: (env: ExecutionEnv) => Promise<void>, settings?: EnvSettings): Promise<void>;
  shell: readonly [string, string];
  symlinks: boolean;
  fifos: boolean;
  nonUtf8Names: boolean;
  linux: boolean;
  largeFileMiB: number;
  listFiles: boolean;
  searchFiles: boolean;
  windows: boolean;
  permissions: boolean;
}

/** Declares one case; `rule` is the space-separated list of rule ids it checks. */
export type Define = (
  name: string,
  rule: string,
  run: (env: ExecutionEnv) => Promise<void>,
  extra?: { timeoutMs?: number; settings?: EnvSettings; skip?: string; permissions?: true },
) => void;
