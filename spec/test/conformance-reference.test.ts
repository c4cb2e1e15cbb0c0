/** The conformance suite against the reference target, then a check that no command outlived its case. */
import { registerConformanceFor } from "./targets.js";

registerConformanceFor("reference");
