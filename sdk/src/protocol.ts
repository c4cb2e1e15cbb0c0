/**
 * `@outpost/sdk/protocol`: the pieces under the envs, for code that speaks the agent's protocol itself — raw
 * requests on a `Connection` (benchmarks of the protocol, tools that need an operation no env method makes), the
 * exec and watch clients the envs are built from, and the UTF-8 stream decoding they share. A host that runs an
 * agent's tools needs none of it: the package root (`@outpost/sdk`) has the envs, their options, `Result`, the
 * error classes and the `ExecutionEnv` types.
 *
 * These exports follow the protocol (`spec/protocol.md`) more closely than the envs do, so they change with it.
 * `Connection` itself is exported by the root, since a host builds one to run an agent over its own transport.
 */
// First: an older Node than Outpost supports stops here, with one message.
import "./node-version.js";

export type { Reply, RequestOptions } from "./connection-types.js";
export { rangeDecoder, StreamDecoder, startsWithBom } from "./decode.js";
export { type CommandEnv, CommandRunner } from "./exec.js";
export { READ_FILE_FEATURE } from "./file-io.js";
export { LIST_FILES_FEATURE } from "./list-files.js";
export { isConnectionLost, RemoteError } from "./remote-error.js";
export { RemoteWatcher } from "./watch.js";
