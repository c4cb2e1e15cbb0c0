import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** `make test-containers` sets OUTPOST_CONTAINERS=1: the Podman files run there, and only there. */
const containerFiles = [
  "sdk/test/podman-fixture.test.ts",
  "sdk/test/container*.test.ts",
  "spec/test/*container*.test.ts",
  "cli/test/*container*.test.ts",
];
const containers = process.env.OUTPOST_CONTAINERS === "1";

export default defineConfig({
  resolve: {
    alias: {
      // Before "@outpost/sdk", which would otherwise match the subpath as a prefix.
      "@outpost/sdk/protocol": here("./sdk/src/protocol.ts"),
      "@outpost/sdk": here("./sdk/src/index.ts"),
      "@outpost/spec/reference": here("./spec/src/reference/node-env.ts"),
      "@outpost/spec/conformance": here("./spec/src/conformance/index.ts"),
    },
  },
  test: {
    include: [
      "sdk/test/**/*.test.ts",
      "cli/test/**/*.test.ts",
      "spec/test/**/*.test.ts",
      "properties/**/*.test.ts",
      "integrations/*/test/**/*.test.ts",
      "tools/test/**/*.test.ts",
    ],
    exclude: [...configDefaults.exclude, ...(containers ? [] : containerFiles)],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
