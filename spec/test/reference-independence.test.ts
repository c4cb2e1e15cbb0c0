/**
 * The reference env is the oracle of every differential test, so it must share no code with the SDK it checks: no
 * file under `spec/src/reference` may import `@outpost/sdk` (values or types) or reach into `sdk/` by a relative
 * path. Every module specifier is collected — static imports and re-exports, `import type`, dynamic `import()`
 * and `require()` — and each must be a Node built-in or a file inside the reference directory.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const referenceDir = resolve(dirname(fileURLToPath(import.meta.url)), "../src/reference");

/** Every `.ts` file below `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The module specifiers a TypeScript source names: `from "x"`, `import "x"`, `import("x")`, `require("x")`. */
function moduleSpecifiers(source: string): string[] {
  const withoutComments = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const patterns = [
    /\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  return patterns.flatMap((pattern) => [...withoutComments.matchAll(pattern)].map((match) => match[1]));
}

/** Why `specifier`, imported by `file`, is not allowed in the reference; `undefined` when it is. */
function forbidden(file: string, specifier: string): string | undefined {
  if (specifier.startsWith("node:")) return undefined;
  if (specifier.startsWith(".")) {
    const target = relative(referenceDir, resolve(dirname(file), specifier));
    return target.startsWith("..") ? `reaches outside spec/src/reference (${target})` : undefined;
  }
  return "is a package, not a Node built-in (the reference may use only node: modules and its own files)";
}

describe("the reference env imports nothing from the SDK", () => {
  const files = sourceFiles(referenceDir);

  it("finds the reference's sources and their imports", () => {
    expect(files.map((file) => relative(referenceDir, file))).toContain("node-env.ts");
    expect(moduleSpecifiers(readFileSync(join(referenceDir, "node-env.ts"), "utf8"))).toContain("./exec.js");
  });

  it("every import is a node: built-in or a file of the reference", () => {
    const violations = files.flatMap((file) =>
      moduleSpecifiers(readFileSync(file, "utf8")).flatMap((specifier) => {
        const why = forbidden(file, specifier);
        return why === undefined ? [] : [`${relative(referenceDir, file).split(sep).join("/")}: "${specifier}" ${why}`];
      }),
    );
    expect(violations).toEqual([]);
  });

  it("recognises the imports it must refuse", () => {
    const file = join(referenceDir, "readers.ts");
    const source = [
      'import { ok } from "@outpost/sdk";',
      'import type { Context } from "@outpost/sdk";',
      'export { StreamDecoder } from "../../../sdk/src/contract/decode.js";',
      'const lazy = await import("../../../sdk/src/contract/result.js");',
      'import "fast-check";',
      'import { spawn } from "node:child_process";',
      'import { toFileInfo } from "./file-info.js";',
    ].join("\n");
    const refused = moduleSpecifiers(source).filter((specifier) => forbidden(file, specifier) !== undefined);
    expect(refused).toEqual([
      "@outpost/sdk",
      "@outpost/sdk",
      "../../../sdk/src/contract/decode.js",
      "fast-check",
      "../../../sdk/src/contract/result.js",
    ]);
  });
});
