// The SDK as its build (sdk/tsconfig.build.json) emits it into a fresh directory: no `@internal` declaration
// reaches the `.d.ts` files a host compiles against, every declaration file has a map to its source, and every
// entry point of package.json's `exports` is a file the build writes.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const sdk = fileURLToPath(new URL("../", import.meta.url));
const src = join(sdk, "src");
const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));

/** Every file below `dir` whose name ends with `suffix`, relative to `dir`. */
function filesBelow(dir: string, suffix: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(suffix))
    .sort();
}

/**
 * The members a source file marks `@internal`: the name declared right after a doc comment carrying the tag
 * (`name?: type`, `name(`, `readonly name`, `export function name`).
 */
function internalMembers(source: string): string[] {
  const tagged =
    /\/\*\*(?:(?!\*\/)[\s\S])*?@internal[\s\S]*?\*\/\s*(?:readonly\s+|static\s+|export\s+|async\s+|function\s+|const\s+|class\s+)*([A-Za-z_$][\w$]*)/g;
  return [...source.matchAll(tagged)].map((match) => match[1]);
}

let out: string;

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), "outpost-sdk-build-"));
  await run(process.execPath, [tsc, "-p", join(sdk, "tsconfig.build.json"), "--outDir", out], { timeout: 120_000 });
}, 150_000);

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe("the SDK's build output", () => {
  it("finds the @internal members of the sources", () => {
    const found = filesBelow(src, ".ts").flatMap((file) => internalMembers(readFileSync(join(src, file), "utf8")));
    // The connection's test knobs and the watch's test hook (more may be added; these must be among them).
    expect(found).toEqual(
      expect.arrayContaining(["pingIntervalMs", "silenceLimitMs", "startTimeoutMs", "nativeWatchLimit"]),
    );
    // A stripped constructor would leave the base class's signature in the declaration, a wrong public type.
    expect(found).not.toContain("constructor");
    expect(internalMembers("/** @internal Test knob. */\n  readonly hook?: number;")).toEqual(["hook"]);
    expect(internalMembers("/** Public. */\n  open(): void;")).toEqual([]);
    expect(internalMembers("/** @internal Transport detail. */\nexport async function run(): void {}")).toEqual([
      "run",
    ]);
  });

  it("declares no @internal member (stripInternal)", () => {
    const leaks = filesBelow(src, ".ts").flatMap((file) => {
      const declarations = readFileSync(join(out, file.replace(/\.ts$/, ".d.ts")), "utf8");
      const leaked = internalMembers(readFileSync(join(src, file), "utf8")).filter((name) =>
        new RegExp(`\\b${name}\\b`).test(declarations),
      );
      return [
        ...leaked.map((name) => `${file}: ${name}`),
        ...(declarations.includes("@internal") ? [`${file}: an @internal comment`] : []),
      ];
    });
    expect(leaks).toEqual([]);
  });

  it("reaches no ssh2 types from the entry points' declarations (a host need not install @types/ssh2)", () => {
    // Follows the relative imports of every declaration file a host compiles, from index.d.ts and protocol.d.ts.
    const reached = new Set<string>();
    const pending = ["index.d.ts", "protocol.d.ts"];
    while (pending.length > 0) {
      const file = pending.pop() as string;
      if (reached.has(file)) continue;
      reached.add(file);
      const text = readFileSync(join(out, file), "utf8");
      for (const match of text.matchAll(/(?:from|import)\s+"(\.{1,2}\/[^"]+)\.js"/g)) {
        pending.push(join(dirname(file), `${match[1]}.d.ts`));
      }
    }
    const importsSsh2 = [...reached].filter((file) =>
      /(?:from|import)\s+"ssh2"/.test(readFileSync(join(out, file), "utf8")),
    );
    expect(reached).toContain(join("ssh", "connect.d.ts"));
    expect(importsSsh2).toEqual([]);
  });

  it("maps every declaration file to its source (declarationMap)", () => {
    const declarations = filesBelow(out, ".d.ts");
    expect(declarations).toContain("protocol.d.ts");
    const unmapped = declarations.filter((file) => {
      const mapPath = join(out, `${file}.map`);
      if (!existsSync(mapPath)) return true;
      const { sources } = JSON.parse(readFileSync(mapPath, "utf8")) as { sources: string[] };
      return (
        sources.length !== 1 || resolve(dirname(mapPath), sources[0]) !== join(src, file.replace(/\.d\.ts$/, ".ts"))
      );
    });
    expect(unmapped).toEqual([]);
  });

  it("writes every entry point of package.json's exports, with its types", () => {
    const manifest = JSON.parse(readFileSync(join(sdk, "package.json"), "utf8")) as {
      exports: Record<string, { types: string; default: string }>;
    };
    expect(Object.keys(manifest.exports)).toEqual([".", "./protocol"]);
    const missing = Object.values(manifest.exports)
      .flatMap((entry) => [entry.types, entry.default])
      .filter((target) => !existsSync(join(out, relative("./dist", target))));
    expect(missing).toEqual([]);
  });
});
