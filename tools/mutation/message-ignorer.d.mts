import type { NodePath } from "@babel/core";

/** The "error-messages" ignorer: a reason when the node is an error message's text, else undefined. */
export declare const messageIgnorer: { shouldIgnore(path: NodePath): string | undefined };
/** Stryker's plugin list of message-ignorer.mjs. */
export declare const strykerPlugins: unknown[];
