/** The conformance suite against an agent reached over SSH (a loopback sshd), then the orphan-process check. */
import { registerConformanceFor } from "./targets.js";

registerConformanceFor("RemoteExecutionEnv over SSH");
