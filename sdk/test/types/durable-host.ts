/**
 * Type-level test, checked by `tsc -p tsconfig.json` in `make lint` (part of `make test`): a Durable host's own
 * types, declared here as `durable-env.md` §1 describes them, work with Outpost's envs in both directions:
 * - a `ShellExecOptions` whose `onOutput` takes chord's full `Context` is accepted by Outpost's `exec`, and the
 *   handler receives that type;
 * - Outpost's envs are accepted where Durable's `ExecutionEnv` is expected.
 * Nothing here runs.
 */
import type { LocalExecutionEnv, RemoteExecutionEnv } from "@outpost/sdk";

// ---- chord's Context (`@earendil-works/chord`, §1.8) ----
interface TelemetryContext {
  readonly traceId?: string;
}
interface ChordContext {
  readonly abortSignal: AbortSignal | undefined;
  readonly telemetryContext: TelemetryContext;
  value<T>(key: symbol): T | undefined;
  toString(): string;
}

// ---- Durable's env types (`@earendil-works/pi-durable/env`, §1.1–1.6) ----
type DurableResult<T, E> = { ok: true; value: T } | { ok: false; error: E };
type DurableFileErrorCode =
  | "aborted"
  | "not_found"
  | "permission_denied"
  | "not_directory"
  | "is_directory"
  | "invalid"
  | "not_supported"
  | "unknown";
declare class DurableFileError extends Error {
  constructor(code: DurableFileErrorCode, message: string, path?: string, cause?: Error);
  readonly code: DurableFileErrorCode;
  readonly path?: string;
}
type DurableExecutionErrorCode =
  | "aborted"
  | "timeout"
  | "shell_unavailable"
  | "spawn_error"
  | "callback_error"
  | "unknown";
declare class DurableExecutionError extends Error {
  constructor(code: DurableExecutionErrorCode, message: string, cause?: Error);
  readonly code: DurableExecutionErrorCode;
  spillPath?: string;
}
interface DurableFileInfo {
  name: string;
  path: string;
  kind: "file" | "directory" | "symlink";
  size: number;
  mtimeMs: number;
}
interface DurableShellOutputInfo {
  stream: "stdout" | "stderr";
  skipped?: { bytes: number; newlines: number; endsWithNewline: boolean };
}
interface DurableShellExecOptions {
  cwd?: string;
  env?: Record<string, string>;
  inheritEnv?: boolean;
  timeout?: number;
  onOutput?: (text: string, context: ChordContext, info: DurableShellOutputInfo) => void;
  spill?: { afterBytes: number; afterLines: number };
  window?: { maxBytes: number; maxLines: number; minIntervalMs: number; bytesPerSecond: number };
}
interface DurableShell {
  exec(
    command: string | readonly string[],
    options: DurableShellExecOptions | undefined,
    context: ChordContext,
  ): Promise<DurableResult<{ exitCode: number; spillPath?: string }, DurableExecutionError>>;
  cleanup(context: ChordContext): Promise<void>;
}
interface DurableFileSystem {
  readonly id: string;
  cwd: string;
  fileInfo(path: string, context: ChordContext): Promise<DurableResult<DurableFileInfo, DurableFileError>>;
  readTextFile(path: string, context: ChordContext): Promise<DurableResult<string, DurableFileError>>;
  writeFile(
    path: string,
    content: string | Uint8Array,
    context: ChordContext,
  ): Promise<DurableResult<void, DurableFileError>>;
  listDir(path: string, context: ChordContext): Promise<DurableResult<DurableFileInfo[], DurableFileError>>;
  exists(path: string, context: ChordContext): Promise<DurableResult<boolean, DurableFileError>>;
}
interface DurableExecutionEnv extends DurableFileSystem, DurableShell {}

// ---- the checks ----
declare const chordContext: ChordContext;
declare const local: LocalExecutionEnv;
declare const remote: RemoteExecutionEnv;

// A host's options, typed against chord's Context, go to Outpost's exec as they are...
const hostOptions: DurableShellExecOptions = {
  timeout: 5,
  onOutput: (text, context, info) => {
    // ...and the handler sees chord's full Context.
    const trace: TelemetryContext = context.telemetryContext;
    void [text, trace, context.value<string>(Symbol.for("k")), info.stream];
  },
};
void local.exec("true", hostOptions, chordContext);
void remote.exec(["true"], hostOptions, chordContext);

// An inline handler is given the context type of the call.
void local.exec(
  "true",
  {
    onOutput: (_text, context) => {
      const telemetry: TelemetryContext = context.telemetryContext;
      void telemetry;
    },
  },
  chordContext,
);

// A plain `{ abortSignal }` still works, and then the handler gets no more than that.
void local.exec(
  "true",
  {
    onOutput: (_text, context) => {
      // @ts-expect-error: the plain context has no telemetryContext
      void context.telemetryContext;
    },
  },
  { abortSignal: undefined },
);

// Outpost's envs are Durable ExecutionEnvs.
function useDurableEnv(env: DurableExecutionEnv): string {
  return env.id;
}
useDurableEnv(local);
useDurableEnv(remote);
