/** The conformance suite against the RemoteExecutionEnv target, then a check that no command outlived its case. */
import { registerConformanceFor } from "./targets.js";

registerConformanceFor("RemoteExecutionEnv");
