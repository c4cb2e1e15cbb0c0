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

export { rangeDecoder, StreamDecoder, startsWithBom } from "./contract/decode.js";
export { type CommandEnv, CommandRunner } from "./env/exec.js";
export { READ_FILE_FEATURE } from "./env/file-io.js";
export { LIST_FILES_FEATURE } from "./env/list-files.js";
export { RemoteWatcher } from "./env/watch.js";
export type { Reply, RequestOptions } from "./wire/connection-types.js";
export { isConnectionLost, RemoteError } from "./wire/remote-error.js";
