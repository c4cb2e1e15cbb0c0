/**
 * The SDK's rooms are layers (sdk/src/README.md), lowest first:
 *
 *   contract (what Durable defines: ExecutionEnv types, errors, Result, paths, decoding)
 *   → wire (the protocol client: frames, sessions, requests, hello, lifetime, the same-host shortcut)
 *   → env (RemoteExecutionEnv, LocalExecutionEnv, the per-method logic over the wire, the packaged agents)
 *   → transports (ssh, container: each reaches an agent its own way; none imports another)
 *   → the package's entry points, the files directly in sdk/src (index.ts, protocol.ts), which may import anything.
 *
 * Every import of every file in sdk/src — static, `import type`, re-exports, dynamic `import()` — may name only its
 * own room or a lower layer, and the files must not import each other in a cycle. Packages and `node:` modules are
 * not checked here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const srcDir = fileURLToPath(new URL("../src/", import.meta.url));

/** Each room's layer. Rooms of the same layer (the transports) may not import each other. */
const LAYERS: Record<string, number> = { contract: 0, wire: 1, env: 2, ssh: 3, container: 3 };
/** The layer of the files directly in sdk/src: the package's entry points, above every room. */
const ENTRY_LAYER = 4;

/** Every `.ts` file below `dir`, as a posix path relative to sdk/src. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(srcDir, path).split(sep).join("/")] : [];
  });
}

/** The tree as it is: file (relative to sdk/src) → source. */
function readTree(): Map<string, string> {
  return new Map(sourceFiles(srcDir).map((file) => [file, readFileSync(join(srcDir, file), "utf8")]));
}

/** The room of a file (its first directory), or "" for the entry points directly in sdk/src. */
function roomOf(file: string): string {
  const slash = file.indexOf("/");
  return slash < 0 ? "" : file.slice(0, slash);
}

function layerOf(room: string): number | undefined {
  return room === "" ? ENTRY_LAYER : LAYERS[room];
}

function describeRoom(room: string): string {
  return room === "" ? "the entry points" : `${room}/ (layer ${LAYERS[room]})`;
}

interface Import {
  /** The importing file, relative to sdk/src. */
  from: string;
  /** The specifier as written. */
  specifier: string;
  /** The imported file, relative to sdk/src (`../` when outside it). */
  to: string;
}

/** The relative imports of every file; TypeScript's own scanner finds them, type-only and dynamic ones included. */
function importsOf(tree: Map<string, string>): Import[] {
  return [...tree].flatMap(([from, source]) =>
    ts
      .preProcessFile(source, true, true)
      .importedFiles.map((ref) => ref.fileName)
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => ({
        from,
        specifier,
        to: posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, ".ts"),
      })),
  );
}

/** What breaks the layering: one line per import that goes up or sideways, per unknown room, per cycle. */
function layeringViolations(tree: Map<string, string>): string[] {
  const violations: string[] = [];
  for (const file of tree.keys()) {
    const room = roomOf(file);
    if (layerOf(room) === undefined) {
      violations.push(`${file}: room ${room}/ has no layer (add it to LAYERS in sdk/test/layering.test.ts)`);
    }
  }
  const imports = importsOf(tree);
  for (const { from, specifier, to } of imports) {
    const what = `${from}: import "${specifier}"`;
    if (to.startsWith("../")) {
      violations.push(`${what} reaches outside sdk/src`);
      continue;
    }
    const [fromRoom, toRoom] = [roomOf(from), roomOf(to)];
    const [fromLayer, toLayer] = [layerOf(fromRoom), layerOf(toRoom)];
    if (fromRoom === toRoom || fromLayer === undefined || toLayer === undefined) continue;
    if (toLayer > fromLayer) {
      violations.push(`${what} goes up from ${describeRoom(fromRoom)} to ${describeRoom(toRoom)}`);
    } else if (toLayer === fromLayer) {
      violations.push(`${what} goes sideways from ${describeRoom(fromRoom)} to ${describeRoom(toRoom)}`);
    }
  }
  violations.push(...cycles(imports));
  return violations;
}

/** Every import cycle a depth-first walk meets, as the chain of files and the imports that close it. */
function cycles(imports: Import[]): string[] {
  const edges = new Map<string, Import[]>();
  for (const edge of imports) edges.set(edge.from, [...(edges.get(edge.from) ?? []), edge]);
  const done = new Set<string>();
  const path: Import[] = [];
  const onPath = new Set<string>();
  const found: string[] = [];
  const visit = (file: string): void => {
    onPath.add(file);
    for (const edge of edges.get(file) ?? []) {
      if (onPath.has(edge.to)) {
        const start = path.findIndex((step) => step.from === edge.to);
        const loop = [...(start < 0 ? [] : path.slice(start)), edge];
        // Start at the first file by name, so the same cycle reads the same whatever the walk's order.
        const first = loop.reduce((best, step, index) => (step.from < loop[best].from ? index : best), 0);
        loop.push(...loop.splice(0, first));
        found.push(`import cycle: ${loop.map((step) => `${step.from} imports "${step.specifier}"`).join(" → ")}`);
      } else if (!done.has(edge.to)) {
        path.push(edge);
        visit(edge.to);
        path.pop();
      }
    }
    onPath.delete(file);
    done.add(file);
  };
  for (const file of edges.keys()) if (!done.has(file)) visit(file);
  return found;
}

/** The tree with `line` added at the top of `file` (created if missing). */
function planted(file: string, line: string): Map<string, string> {
  const tree = readTree();
  tree.set(file, `${line}\n${tree.get(file) ?? ""}`);
  return tree;
}

describe("the SDK's layers", () => {
  it("finds the rooms and their imports", () => {
    const tree = readTree();
    expect(new Set([...tree.keys()].map(roomOf))).toEqual(new Set(["", "contract", "wire", "env", "ssh"]));
    expect(importsOf(tree)).toContainEqual({
      from: "env/remote-env.ts",
      specifier: "../wire/connection.js",
      to: "wire/connection.ts",
    });
  });

  it("every import points down the layers, and no files import each other in a cycle", () => {
    expect(layeringViolations(readTree())).toEqual([]);
  });

  it("fails on an upward import, type-only or dynamic ones too", () => {
    expect(
      layeringViolations(planted("wire/frame.ts", 'import { RemoteExecutionEnv } from "../env/remote-env.js";')),
    ).toContain('wire/frame.ts: import "../env/remote-env.js" goes up from wire/ (layer 1) to env/ (layer 2)');
    expect(
      layeringViolations(planted("contract/paths.ts", 'import type { Reply } from "../wire/connection-types.js";')),
    ).toContain(
      'contract/paths.ts: import "../wire/connection-types.js" goes up from contract/ (layer 0) to wire/ (layer 1)',
    );
    expect(layeringViolations(planted("env/exec.ts", 'const ssh = await import("../ssh/connect.js");'))).toContain(
      'env/exec.ts: import "../ssh/connect.js" goes up from env/ (layer 2) to ssh/ (layer 3)',
    );
    expect(layeringViolations(planted("ssh/errors.ts", 'export * from "../index.js";'))).toContain(
      'ssh/errors.ts: import "../index.js" goes up from ssh/ (layer 3) to the entry points',
    );
  });

  it("fails on an import between transports, a room without a layer, and an import out of sdk/src", () => {
    expect(layeringViolations(planted("container/connect.ts", 'import { SshError } from "../ssh/errors.js";'))).toEqual(
      ['container/connect.ts: import "../ssh/errors.js" goes sideways from container/ (layer 3) to ssh/ (layer 3)'],
    );
    expect(layeringViolations(planted("misc/helper.ts", ""))).toEqual([
      "misc/helper.ts: room misc/ has no layer (add it to LAYERS in sdk/test/layering.test.ts)",
    ]);
    expect(layeringViolations(planted("wire/frame.ts", 'import "../../test/fixtures/sshd.js";'))).toEqual([
      'wire/frame.ts: import "../../test/fixtures/sshd.js" reaches outside sdk/src',
    ]);
  });

  it("fails on an import cycle, naming every file and import in it", () => {
    // types.ts imports errors.ts; errors.ts importing types.ts back closes the cycle.
    expect(
      layeringViolations(planted("contract/errors.ts", 'import type { ExecutionEnv } from "./types.js";')),
    ).toEqual(['import cycle: contract/errors.ts imports "./types.js" → contract/types.ts imports "./errors.js"']);
  });
});
