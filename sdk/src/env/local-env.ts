/** `LocalExecutionEnv`: the Outpost agent for this machine, started as a child process, behind `ExecutionEnv`. */

import type { HostErrorClasses } from "../contract/host-errors.js";
import { Connection } from "../wire/connection.js";
import { packagedAgent } from "./agent-binary.js";
import { RemoteExecutionEnv } from "./remote-env.js";
import type { RemoteWatchOptions } from "./watch.js";

/** Options of {@link LocalExecutionEnv}. */
export interface LocalExecutionEnvOptions {
  /** Working directory for relative paths and commands (default `process.cwd()`). */
  cwd?: string;
  /** A custom shell for string commands, as in `NodeExecutionEnv`. */
  shellPath?: string;
  /** Variables layered over this process's environment (read at each call) for every command. */
  shellEnv?: Record<string, string | undefined>;
  /** The agent binary (default: the packaged agent for this machine, or `OUTPOST_AGENT`). */
  agentPath?: string;
  /** Receives the agent's stderr. */
  onLog?: (text: string) => void;
  /** Options of every watch, as `NodeExecutionEnv`'s `watch` option. */
  watch?: RemoteWatchOptions;
  /** The host's error classes every failure is constructed with (see `RemoteExecutionEnvOptions.errors`). */
  errors?: HostErrorClasses;
}

/**
 * An `ExecutionEnv` on this machine, run by the Outpost agent rather than in process, so local and remote
 * environments share one implementation. Its `id` is `"node:local"`, the file namespace of every local Node env.
 * The agent starts on first use; an idle agent never keeps the host process alive, and `close()` stops it.
 */
export class LocalExecutionEnv extends RemoteExecutionEnv {
  /** The connection to this env's agent (for raw requests, e.g. benchmarks of the protocol itself). */
  readonly connection: Connection;

  /** Creates the env; resolves the agent binary now (throws if it is missing) but starts it lazily. */
  constructor(options: LocalExecutionEnvOptions = {}) {
    const connection = new Connection({
      command: [options.agentPath ?? packagedAgent()],
      // The agent is this machine's: whole-file bytes may skip the pipe (same-host.ts).
      sameHost: true,
      onLog: options.onLog,
    });
    super({
      connection,
      id: "node:local",
      cwd: options.cwd ?? process.cwd(),
      shellPath: options.shellPath,
      shellEnv: options.shellEnv,
      watch: options.watch,
      errors: options.errors,
    });
    this.connection = connection;
  }

  /** Commands inherit this process's environment as it is at each call, as `NodeExecutionEnv`'s do. */
  protected override commandHostEnv(): Record<string, string | undefined> {
    return process.env;
  }

  /** Stops the agent (killing any command it still runs); later operations fail with "Connection closed". */
  async close(): Promise<void> {
    await this.connection.close();
  }
}
