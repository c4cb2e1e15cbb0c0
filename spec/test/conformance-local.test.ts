/** The conformance suite against the LocalExecutionEnv target, then a check that no command outlived its case. */
import { registerConformanceFor } from "./targets.js";

registerConformanceFor("LocalExecutionEnv");
