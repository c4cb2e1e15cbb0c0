import { homedir } from "node:os";
import { posix, win32 } from "node:path";
import { describe, expect, it } from "vitest";
import {
  basenameOnAgent,
  hasNulByte,
  joinOnAgent,
  type PathRules,
  pathApi,
  resolveEnvPath,
  resolveOnAgent,
} from "../src/contract/paths.js";
import { asWindowsAgent, nodeResolve } from "./fixtures/node-paths.js";

const POSIX_INPUTS = [
  "",
  ".",
  "..",
  "a",
  "a/b/../c",
  "a//b///c/",
  "./x/./y",
  "../../../../../../x",
  "/",
  "//",
  "/a/../../b",
  "/tmp/x/",
  "~",
  "~/",
  "~/a/../b",
  "~user",
  "~foo/bar",
  "~\\x",
  "file://",
  "file:///",
  "file:///tmp/a%20b",
  "file://localhost/x",
  "file://otherhost/x",
  "file:///tmp/%2Fslash",
  "file:///tmp/%2fslash",
  "file:///tmp/q?x=1#f",
  "file:///tmp/%E2%82",
  "file:///tmp/%C3%A9",
  "FILE:///tmp/upper",
  "file:relative",
  "é/ü",
  "a\u0000b",
];

describe("POSIX resolution equals Node's in this process", () => {
  const rules: PathRules = { os: "linux", home: homedir(), cwd: process.cwd(), driveCwds: {} };
  const cwds = ["/", "/srv/work", "/srv/work/", "rel/dir", "", "../up", "/a/./b/../c"];

  for (const cwd of cwds) {
    it(`cwd ${JSON.stringify(cwd)}`, () => {
      for (const path of POSIX_INPUTS) {
        expect([path, resolveEnvPath(rules, cwd, path)]).toEqual([
          path,
          nodeResolve(posix, false, homedir(), cwd, path),
        ]);
      }
    });
  }

  it("uses the agent's home, cwd and path flavour, not this process's", () => {
    const agent: PathRules = { os: "macos", home: "/Users/remote", cwd: "/Users/remote/start", driveCwds: {} };
    expect(resolveEnvPath(agent, "proj", "src/a.ts")).toBe("/Users/remote/start/proj/src/a.ts");
    expect(resolveEnvPath(agent, "/w", "~")).toBe("/Users/remote");
    expect(resolveEnvPath(agent, "/w", "~/x/../y")).toBe("/Users/remote/y");
    expect(resolveEnvPath(agent, "/w", "~\\x")).toBe("/w/~\\x");
    expect(resolveEnvPath(agent, "/w", "file://host/x")).toBe("/w/file:/host/x");
    expect(resolveEnvPath(agent, "/w", "")).toBe("/w");
  });

  it("keeps `~` verbatim and joins `~/` without resolving, as Node does", () => {
    const agent: PathRules = { os: "linux", home: "/home/u/", cwd: "/", driveCwds: {} };
    expect(resolveEnvPath(agent, "/w", "~")).toBe("/home/u/");
    expect(resolveEnvPath(agent, "/w", "~/")).toBe("/home/u/");
    const relativeHome: PathRules = { os: "linux", home: "", cwd: "/", driveCwds: {} };
    expect(resolveEnvPath(relativeHome, "/w", "~/a")).toBe("a");
  });
});

describe("win32 resolution equals Node's path.win32 with the agent's cwd and drive cwds", () => {
  const agentCwd = "C:\\Agent\\cwd";
  const driveCwds = { "D:": "D:\\dcwd", "F:": "C:\\elsewhere" };
  const rules: PathRules = { os: "windows", home: "C:\\Users\\u", cwd: agentCwd, driveCwds };

  /** Node's win32.resolve as it runs on the agent. */
  function nodeOnAgent(...segments: string[]): string {
    return asWindowsAgent(rules, () => win32.resolve(...segments));
  }

  const pieces = [
    "",
    "a",
    "..\\x",
    "\\root",
    "/slash/form",
    "C:",
    "c:rel",
    "C:\\abs",
    "D:",
    "d:rel",
    "D:\\abs\\..\\y",
    "E:rel",
    "E:",
    "F:rel",
    "\\\\server\\share\\x",
    "\\\\server\\share",
    "//server/share/y",
    "\\\\server",
    "\\\\",
    // Drive letters at both ends of both ranges, and the characters just outside them (not drives for Node).
    "A:x",
    "Z:\\z",
    "Z:rel",
    "A:\\a",
    "a:",
    "z:rel",
    "@:x",
    "[:x",
    "`:x",
    "{:x",
    "1:\\x",
    // UNC spellings with doubled separators, a missing share, or a third leading separator.
    "\\\\server\\",
    "\\\\server\\\\share\\x",
    "//server//share",
    "\\\\\\x",
    "x\\..\\..\\..\\y\\.\\",
  ];

  it("for one segment", () => {
    for (const one of pieces) expect([one, resolveOnAgent(rules, one)]).toEqual([one, nodeOnAgent(one)]);
  });

  it("for every pair and some triples of segments", () => {
    for (const first of pieces) {
      for (const second of pieces) {
        expect([first, second, resolveOnAgent(rules, first, second)]).toEqual([
          first,
          second,
          nodeOnAgent(first, second),
        ]);
        for (const third of ["b", "d:c", "\\z", "C:y"]) {
          expect(resolveOnAgent(rules, first, second, third)).toBe(nodeOnAgent(first, second, third));
        }
      }
    }
  });

  it("for every pair of segments on an agent whose cwd is a UNC path, with and without drive cwds", () => {
    // Here drive-relative segments may stay drive-relative (driveRelative), which the C:\ agent never reaches.
    const driveCwdSets: Record<string, string>[] = [{}, { "D:": "D:\\dcwd", "F:": "\\\\other\\share" }];
    for (const driveCwds of driveCwdSets) {
      const unc: PathRules = { ...rules, cwd: "\\\\server\\share\\dir", driveCwds };
      for (const first of pieces) {
        for (const second of pieces) {
          const expected = asWindowsAgent(unc, () => win32.resolve(first, second));
          expect([first, second, resolveOnAgent(unc, first, second)]).toEqual([first, second, expected]);
        }
      }
    }
  });

  it("resolves env paths like NodeExecutionEnv on Windows", () => {
    expect(resolveEnvPath(rules, "C:\\work", "src\\a.ts")).toBe("C:\\work\\src\\a.ts");
    expect(resolveEnvPath(rules, "C:\\work", "~")).toBe("C:\\Users\\u");
    expect(resolveEnvPath(rules, "C:\\work", "~\\docs\\..\\x")).toBe("C:\\Users\\u\\x");
    expect(resolveEnvPath(rules, "C:\\work", "~/docs")).toBe("C:\\Users\\u\\docs");
    // Drive-relative: the drive's own cwd, or its root when the agent's cwd is on another drive.
    expect(resolveEnvPath(rules, "C:\\work", "D:notes")).toBe("D:\\dcwd\\notes");
    expect(resolveEnvPath(rules, "C:\\work", "E:notes")).toBe("E:\\notes");
    expect(resolveEnvPath(rules, "C:\\work", "F:notes")).toBe("F:\\notes");
    // Node keeps the drive letter as the path spells it.
    expect(resolveEnvPath(rules, "D:\\work", "d:notes")).toBe("d:\\work\\notes");
    // A root-relative absolute path takes the drive of the agent's cwd, not of the env's cwd.
    expect(resolveEnvPath(rules, "D:\\work", "\\top")).toBe("C:\\top");
    expect(resolveEnvPath(rules, "rel", "x")).toBe("C:\\Agent\\cwd\\rel\\x");
    expect(resolveEnvPath(rules, "C:\\work", "file:///C:/a%20b/c")).toBe("C:\\a b\\c");
    expect(resolveEnvPath(rules, "C:\\work", "file://server/share/x")).toBe("\\\\server\\share\\x");
    expect(resolveEnvPath(rules, "C:\\work", "file:///C:/a%2Fb")).toBe("C:\\work\\file:\\C:\\a%2Fb");
    expect(resolveEnvPath(rules, "C:\\work", "")).toBe("C:\\work");
  });

  it("matches Node for env paths over many inputs", () => {
    const inputs = [...pieces, "~", "~\\a", "~/b", "file:///D:/x", "file:///c:/y/../z", "file://h/s/p", "%", "."];
    for (const cwd of ["C:\\work", "D:\\w", "d:rel", "rel", "\\\\srv\\sh\\w", ""]) {
      for (const path of inputs) {
        const expected = asWindowsAgent(rules, () => nodeResolve(win32, true, rules.home, cwd, path));
        expect([cwd, path, resolveEnvPath(rules, cwd, path)]).toEqual([cwd, path, expected]);
      }
    }
  });
});

describe("win32 resolution on an agent whose cwd is a UNC path", () => {
  // Regression (found by properties/paths.test.ts): Node skips a fallback cwd on another device that has no
  // backslash at index 2, so a drive without its own cwd stays drive-relative instead of using any cwd.
  const rules: PathRules = { os: "windows", home: "C:\\Users\\u", cwd: "\\\\server\\share\\dir", driveCwds: {} };

  it("leaves drive-relative paths of drives without a cwd drive-relative, as Node does", () => {
    // Expected values printed by Node's win32.resolve with process.cwd() = \\server\share\dir.
    expect(resolveEnvPath(rules, "", "C:")).toBe("C:");
    expect(resolveEnvPath(rules, "D:", "ac:")).toBe("D:ac:");
    expect(resolveEnvPath(rules, "", "C:foo\\..\\..\\bar")).toBe("C:..\\bar");
    expect(resolveEnvPath(rules, "", "C:foo\\")).toBe("C:foo");
    expect(resolveEnvPath(rules, "sub", "C:x")).toBe("C:sub\\x");
    expect(resolveOnAgent(rules, "sub", "C:x")).toBe("C:sub\\x");
    expect(resolveEnvPath(rules, "", "x")).toBe("\\\\server\\share\\dir\\x");
  });
});

describe("joins, basenames and NUL detection", () => {
  it("uses the agent's flavour", () => {
    expect(pathApi({ os: "windows" })).toBe(win32);
    expect(pathApi({ os: "android" })).toBe(posix);
    expect(joinOnAgent({ os: "linux" }, [])).toBe(".");
    expect(joinOnAgent({ os: "linux" }, ["a/", "b/"])).toBe("a/b/");
    expect(joinOnAgent({ os: "linux" }, ["/a", "../../b"])).toBe("/b");
    expect(joinOnAgent({ os: "windows" }, ["C:\\t", "tmp-"])).toBe("C:\\t\\tmp-");
    expect(joinOnAgent({ os: "linux" }, ["/tmp", ""])).toBe("/tmp");
    expect(basenameOnAgent({ os: "linux" }, "/")).toBe("");
    expect(basenameOnAgent({ os: "windows" }, "C:\\dir\\f.txt")).toBe("f.txt");
    expect(basenameOnAgent({ os: "linux" }, "/dir\\f.txt")).toBe("dir\\f.txt");
  });

  it("finds NUL characters anywhere", () => {
    expect(hasNulByte("/a\u0000")).toBe(true);
    expect(hasNulByte("/a/b")).toBe(false);
  });
});
