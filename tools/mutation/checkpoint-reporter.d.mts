/** Stryker's plugin list of checkpoint-reporter.mjs (the "checkpoint" reporter). */
export declare const strykerPlugins: unknown[];
