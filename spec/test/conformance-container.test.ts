/** The conformance suite against an agent in a Podman container (busybox + bash), then the orphan-process check. */
import { registerConformanceFor } from "./targets.js";

registerConformanceFor("RemoteExecutionEnv in a container");
