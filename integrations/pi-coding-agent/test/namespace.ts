/**
 * An env whose agent runs in its own mount namespace: there, `visibleAt` shows the contents of `targetDir` (a bind
 * mount) and `TMPDIR` is a private tmpfs at `privateTmp`, so the target's files differ from this machine's at the
 * same paths. Needs root (`unshare --mount`).
 */
import { Connection, packagedAgent, RemoteExecutionEnv } from "@outpost/sdk";

/** A `RemoteExecutionEnv` in a mount namespace of its own, with `cwd` = `visibleAt`; `close()` stops the agent. */
export function namespaceEnv(
  targetDir: string,
  visibleAt: string,
  privateTmp: string,
): { env: RemoteExecutionEnv; close: () => Promise<void> } {
  // The agent's own arguments (`serve --token …`) follow the four paths.
  const script =
    'mount --bind "$1" "$2" && mount -t tmpfs tmpfs "$3" && export TMPDIR="$3" && agent="$4" && shift 4 && exec "$agent" "$@"';
  const connection = new Connection({
    command: [
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "/bin/sh",
      "-c",
      script,
      "sh",
      targetDir,
      visibleAt,
      privateTmp,
      packagedAgent(),
    ],
  });
  const env = new RemoteExecutionEnv({ connection, id: "test:pi-namespace", cwd: visibleAt });
  return { env, close: () => connection.close() };
}
