/**
 * Type-level test, checked by `tsc -p tsconfig.json` in `make lint`, beside durable-host.ts: the same checks with
 * the real `Context` of `@earendil-works/chord` (a devDependency, its published types) instead of a declaration of
 * it, so a change in chord's Context that Outpost's types do not accept fails here.
 * - a `ShellExecOptions` whose `onOutput` takes chord's `Context` is accepted by Outpost's `exec`, and an inline
 *   handler receives that type (its `value(key)` included);
 * - every env method takes chord's `Context` where a Durable host passes one.
 * Nothing here runs.
 */
import type { Context, ContextKey } from "@earendil-works/chord";
import type { LocalExecutionEnv, RemoteExecutionEnv } from "@outpost/sdk";

declare const context: Context;
declare const traceKey: ContextKey<string>;
declare const local: LocalExecutionEnv;
declare const remote: RemoteExecutionEnv;

/** A Durable host's exec options, with chord's Context (durable-env.md §1.4). */
interface HostShellExecOptions {
  timeout?: number;
  onOutput?: (text: string, context: Context, info: { stream: "stdout" | "stderr" }) => void;
}

const hostOptions: HostShellExecOptions = {
  timeout: 5,
  onOutput: (text, handlerContext, info) => {
    const trace: string | undefined = handlerContext.value(traceKey);
    void [text, trace, info.stream];
  },
};
void local.exec("true", hostOptions, context);
void remote.exec(["true"], hostOptions, context);

// An inline handler is given chord's Context, the type of the call's context.
void local.exec(
  "true",
  {
    onOutput: (_text, handlerContext) => {
      const same: Context = handlerContext;
      void same.value(traceKey);
      // @ts-expect-error: the handler's context is chord's Context (not any), which has no telemetryContext
      void handlerContext.telemetryContext;
    },
  },
  context,
);

// Every method a Durable host calls takes chord's Context.
async function asHost(env: LocalExecutionEnv | RemoteExecutionEnv): Promise<void> {
  await env.fileInfo("a", context);
  await env.readTextFile("a", context);
  await env.writeFile("a", "text", context);
  await env.listDir(".", context);
  await env.exists("a", context);
  await env.cleanup(context);
}
void asHost(local);
void asHost(remote);
