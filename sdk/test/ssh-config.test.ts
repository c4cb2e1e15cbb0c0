/**
 * ssh config files as OpenSSH reads them — `Include` (globs, order, conditional inclusion, relative paths) and
 * `Match` — checked against OpenSSH itself: every case is also given to `ssh -G -F <file>`, which prints what `ssh`
 * would use without connecting. Config files live in a temp dir; relative includes are resolved under a temp HOME
 * (OpenSSH takes its home from the password database, so those cases are checked against Outpost's rule alone).
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { hostConfig, parseConfig } from "../src/ssh/ssh-config.js";
import { resolveRoute } from "../src/ssh/target.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "outpost-ssh-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const me = userInfo().username;

/** Writes `files` (paths relative to the temp dir) and returns the absolute path of the first. */
function write(files: Record<string, string>): string {
  const paths = Object.entries(files).map(([name, text]) => {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text.replaceAll("@DIR@", dir));
    chmodSync(path, 0o644);
    return path;
  });
  return paths[0];
}

/** The settings both sides are compared on, with OpenSSH's defaults written out. */
interface View {
  hostname: string;
  user: string;
  port: string;
  proxyjump?: string;
  hostkeyalias?: string;
  serveraliveinterval: string;
  serveralivecountmax: string;
  connecttimeout: string;
  identityfile: string[];
}

async function opensshView(file: string, host: string, user?: string): Promise<View | "error"> {
  const args = ["-G", "-F", file, ...(user === undefined ? [] : ["-l", user]), "--", host];
  const output = await run("ssh", args).then(
    (result) => result.stdout,
    () => undefined,
  );
  if (output === undefined) return "error";
  const lines = output.split("\n").map((line) => line.split(" "));
  const value = (key: string) =>
    lines
      .find(([name]) => name === key)
      ?.slice(1)
      .join(" ");
  return {
    hostname: value("hostname")!,
    user: value("user")!,
    port: value("port")!,
    proxyjump: value("proxyjump"),
    hostkeyalias: value("hostkeyalias"),
    serveraliveinterval: value("serveraliveinterval")!,
    serveralivecountmax: value("serveralivecountmax")!,
    connecttimeout: value("connecttimeout")!,
    // OpenSSH lists its default keys when the config names none.
    identityfile: lines
      .filter(([name, path]) => name === "identityfile" && !path.startsWith("~/.ssh/id_"))
      .map(([, path]) => path),
  };
}

async function outpostView(file: string, host: string, user?: string): Promise<View | "error"> {
  try {
    const values = await hostConfig(parseConfig(file, readFileSync(file, "utf8")), { host, user, localUser: me });
    const one = (key: string) => {
      const value = values[key];
      return Array.isArray(value) ? value.join(" ") : value;
    };
    const hostName = one("hostname")?.replace(/%([%h])/g, (_, token: string) => (token === "%" ? "%" : host));
    return {
      hostname: (hostName ?? host).toLowerCase(),
      user: one("user") ?? me,
      port: one("port") ?? "22",
      proxyjump: one("proxyjump"),
      hostkeyalias: one("hostkeyalias"),
      serveraliveinterval: one("serveraliveinterval") ?? "0",
      serveralivecountmax: one("serveralivecountmax") ?? "3",
      connecttimeout: one("connecttimeout") ?? "none",
      identityfile: (values.identityfile as string[] | undefined) ?? [],
    };
  } catch (error) {
    expect(error).toMatchObject({ code: "config" });
    return "error";
  }
}

/** Both readers agree on `host` (as `user`, if given); returns the view for the case's own assertions. */
async function agree(file: string, host: string, user?: string): Promise<View | "error"> {
  const [openssh, outpost] = await Promise.all([opensshView(file, host, user), outpostView(file, host, user)]);
  expect(outpost, `${host} as ${user ?? "(local user)"} with ${file}`).toEqual(openssh);
  return outpost;
}

describe("Include, as OpenSSH reads it [SSH3]", () => {
  it("reads every file a glob matches, in lexical order, first value winning, dot files not matched", async () => {
    const main = write({
      "glob/config": "Include @DIR@/glob/conf.d/*.conf\nHost x\n  User main\n  Port 9\n",
      "glob/conf.d/20-b.conf": "Port 2020\nUser b\n",
      "glob/conf.d/10-a.conf": "Port 1010\nIdentityFile /keys/a\n",
      "glob/conf.d/.hidden.conf": "User hidden\n",
      "glob/conf.d/30-c.txt": "ConnectTimeout 3\n",
    });
    expect(await agree(main, "x")).toMatchObject({ port: "1010", user: "b", identityfile: ["/keys/a"] });
  });

  it("reads several paths per line, quoted ones with spaces, and skips a path that matches nothing", async () => {
    const main = write({
      "multi/config": 'Include @DIR@/multi/missing.conf "@DIR@/multi/with space.conf" @DIR@/multi/b?.conf\n',
      "multi/with space.conf": "ServerAliveInterval 4\n",
      "multi/b1.conf": "ConnectTimeout 6\n",
      "multi/b22.conf": "ConnectTimeout 7\n",
    });
    expect(await agree(main, "x")).toMatchObject({ serveraliveinterval: "4", connecttimeout: "6" });
  });

  it("includes conditionally inside Host blocks; a Host in the included file never changes the including block", async () => {
    const main = write({
      "cond/config": [
        "Host nomatch",
        "  Include @DIR@/cond/never.conf",
        "Host x",
        "  Include @DIR@/cond/inner.conf",
        "  HostName X.Example",
        "Host *",
        "  ServerAliveCountMax 5",
        "",
      ].join("\n"),
      "cond/never.conf": "Port 1111\nUser never\n",
      "cond/inner.conf": "ServerAliveInterval 5\nHost other\n  ConnectTimeout 7\nHost x\n  HostKeyAlias inner\n",
    });
    expect(await agree(main, "x")).toMatchObject({
      hostname: "x.example",
      port: "22",
      serveraliveinterval: "5",
      serveralivecountmax: "5",
      hostkeyalias: "inner",
      connecttimeout: "none",
    });
    expect(await agree(main, "other")).toMatchObject({ connecttimeout: "none", serveralivecountmax: "5" });
  });

  it("refuses include loops deeper than 16 levels and included files others may write, as OpenSSH does", async () => {
    const loop = write({ "loop/config": "Include @DIR@/loop/config\n" });
    expect(await agree(loop, "x")).toBe("error");
    const main = write({ "perm/config": "Include @DIR@/perm/open.conf\n", "perm/open.conf": "Port 1\n" });
    chmodSync(join(dir, "perm/open.conf"), 0o666);
    expect(await agree(main, "x")).toBe("error");
    // Group-writable is accepted when the group is this user's own (Debian's OpenSSH).
    chmodSync(join(dir, "perm/open.conf"), 0o664);
    expect(await agree(main, "x")).toMatchObject({ port: "1" });
  });

  describe("relative paths and ~/", () => {
    let home: string;
    let savedHome: string | undefined;
    beforeEach(() => {
      savedHome = process.env.HOME;
      home = mkdtempSync(join(tmpdir(), "outpost-ssh-config-home-"));
      process.env.HOME = home;
    });
    afterEach(() => {
      process.env.HOME = savedHome;
      rmSync(home, { recursive: true, force: true });
    });

    it("resolves a relative Include under ~/.ssh and ~/ under the home, wherever the including file is", async () => {
      mkdirSync(join(home, ".ssh", "config.d"), { recursive: true });
      writeFileSync(join(home, ".ssh", "config.d", "work"), "Host gpu\n  HostName gpu.internal\n  Port 2201\n");
      writeFileSync(join(home, "extra.conf"), "Host gpu\n  User alice\n");
      const main = write({ "rel/config": "Include config.d/*\nInclude ~/extra.conf\n" });
      const route = await resolveRoute("gpu", { configFile: main, trustedKnownHostsFiles: [] });
      expect(route.hops[0]).toMatchObject({ hostName: "gpu.internal", port: 2201, user: "alice" });
    });
  });
});

describe("Match, as OpenSSH reads it [SSH3]", () => {
  it("host matches the HostName obtained so far, originalhost the name given", async () => {
    const main = write({
      "match-host/config": [
        "Host alias",
        "  HostName Real.Example",
        "Match host real.example",
        "  Port 2200",
        "Match originalhost alias",
        "  User orig",
        "Match host alias",
        "  HostKeyAlias never",
        "Match host !real.example,*",
        "  ConnectTimeout 9",
        "",
      ].join("\n"),
    });
    expect(await agree(main, "alias")).toMatchObject({ port: "2200", user: "orig", connecttimeout: "none" });
    expect(await agree(main, "ALIAS")).toMatchObject({ port: "22", connecttimeout: "9" });
    expect(await agree(main, "other")).toMatchObject({ port: "22", user: me, connecttimeout: "9" });
  });

  it("user matches the user given, else the User obtained so far; localuser the local user; all and ! negation", async () => {
    const main = write({
      "match-user/config": [
        "Host h",
        "  User carol",
        "Match user bob",
        "  Port 2201",
        "Match user carol",
        "  Port 2202",
        "Match !user bob,carol",
        "  HostKeyAlias neither",
        `Match localuser ${me}`,
        "  ServerAliveInterval 3",
        `Match !localuser ${me}`,
        "  ServerAliveCountMax 9",
        "Match all",
        "  ConnectTimeout 4",
        "",
      ].join("\n"),
    });
    expect(await agree(main, "h")).toMatchObject({ user: "carol", port: "2202", hostkeyalias: undefined });
    expect(await agree(main, "h", "bob")).toMatchObject({ user: "bob", port: "2201" });
    expect(await agree(main, "other")).toMatchObject({
      user: me,
      port: "22",
      hostkeyalias: "neither",
      serveraliveinterval: "3",
      serveralivecountmax: "3",
      connecttimeout: "4",
    });
  });

  it("Match final asks for a second pass, in which Host lines see the HostName", async () => {
    const main = write({
      "match-final/config": [
        "Host real.example",
        "  User finaluser",
        "Match final host real.example",
        "  Port 3333",
        "Match canonical",
        "  ConnectTimeout 8",
        "Host alias",
        "  HostName real.example",
        "",
      ].join("\n"),
    });
    expect(await agree(main, "alias")).toMatchObject({ user: "finaluser", port: "3333", connecttimeout: "8" });
  });

  it("Host patterns: ? is one character, ! excludes, the name is compared as given", async () => {
    const main = write({
      "host-patterns/config": "Host a?c\n  Port 2203\nHost * !secret\n  ServerAliveInterval 2\nHost target\n  User t\n",
    });
    expect(await agree(main, "abc")).toMatchObject({ port: "2203", serveraliveinterval: "2" });
    expect(await agree(main, "ac")).toMatchObject({ port: "22" });
    expect(await agree(main, "secret")).toMatchObject({ serveraliveinterval: "0" });
    expect(await agree(main, "TARGET")).toMatchObject({ user: me });
  });

  it("skips Match exec when another criterion already fails, and refuses it when the command would decide", async () => {
    const main = write({
      "exec/config": 'Match host nomatch exec "exit 0"\n  Port 2206\nHost *\n  Port 2207\n',
    });
    expect(await agree(main, "x")).toMatchObject({ port: "2207" });
    // OpenSSH would run the command here; Outpost runs none and says why.
    const decides = write({ "exec-decides/config": 'Match host x exec "exit 0"\n  Port 2208\n' });
    await expect(resolveRoute("x", { configFile: decides, trustedKnownHostsFiles: [] })).rejects.toMatchObject({
      code: "config",
      message: expect.stringContaining("Match exec"),
    });
    expect((await resolveRoute("y", { configFile: decides, trustedKnownHostsFiles: [] })).hops[0].port).toBe(22);
  });

  it("refuses malformed Match lines, as OpenSSH does", async () => {
    for (const [name, text] of [
      ["match-bad-all", "Match all host x\n  Port 1\n"],
      ["match-bad-criterion", "Match colour blue\n  Port 1\n"],
    ]) {
      expect(await agree(write({ [`${name}/config`]: text }), "x")).toBe("error");
    }
  });
});

describe("keepalives from the config", () => {
  it("takes ServerAliveInterval and ServerAliveCountMax per hop, the options winning", async () => {
    const main = write({
      "keepalive/config": "Host k\n  ServerAliveInterval 2\n  ServerAliveCountMax 4\n",
    });
    const base = { configFile: main, trustedKnownHostsFiles: [] };
    expect((await resolveRoute("k", base)).hops[0]).toMatchObject({ keepaliveMs: 2000, keepaliveCountMax: 4 });
    expect((await resolveRoute("other", base)).hops[0]).toMatchObject({ keepaliveMs: 0, keepaliveCountMax: 3 });
    expect((await resolveRoute("k", { ...base, serverAliveCountMax: 1 })).hops[0].keepaliveCountMax).toBe(1);
    await expect(resolveRoute("k", { ...base, serverAliveCountMax: 0 })).rejects.toMatchObject({ code: "invalid" });
  });
});

describe("edges, each compared with OpenSSH [SSH3]", () => {
  it("globs: classes, negated classes, a backslash quoting a wildcard, empty path segments, dot patterns", async () => {
    const main = write({
      "globs/config": [
        "Include @DIR@/globs/d/[ab].conf",
        "Include @DIR@/globs/d/[!ab].conf",
        "Include @DIR@/globs/d/lit\\*.conf",
        "Include @DIR@/globs//e//*.conf",
        "Include @DIR@/globs/f/.*",
        "",
      ].join("\n"),
      "globs/d/a.conf": "Port 1001\n",
      "globs/d/b.conf": "Port 1002\n",
      "globs/d/c.conf": "User from-c\n",
      "globs/d/a.conf.bak": "ConnectTimeout 9\n",
      "globs/d/lit*.conf": "ServerAliveInterval 11\n",
      "globs/d/litx.conf": "ServerAliveInterval 12\n",
      "globs/e/x.conf": "ServerAliveCountMax 7\n",
      "globs/f/.hidden": "HostKeyAlias dotted\n",
    });
    expect(await agree(main, "x")).toMatchObject({
      port: "1001",
      user: "from-c",
      serveraliveinterval: "11",
      serveralivecountmax: "7",
      hostkeyalias: "dotted",
      connecttimeout: "none",
    });
  });

  it("reads a glob's files in lexical order whatever order the directory lists them in", async () => {
    const names = ["m", "c", "x", "a", "q", "b", "z", "k"];
    const files: Record<string, string> = { "order/config": "Include @DIR@/order/d/*\n" };
    for (const name of names) files[`order/d/${name}`] = `User from-${name}\nIdentityFile /keys/${name}\n`;
    const main = write(files);
    expect(await agree(main, "x")).toMatchObject({
      user: "from-a",
      identityfile: [...names].sort().map((name) => `/keys/${name}`),
    });
  });

  it("sorts a glob's matches by their whole paths, across directories ('a-b/conf' before 'a/conf')", async () => {
    const main = write({
      "sorted/config": "Include @DIR@/sorted/*/conf\n",
      "sorted/a/conf": "User from-a\nIdentityFile /keys/a\n",
      "sorted/a-b/conf": "User from-a-b\nIdentityFile /keys/a-b\n",
      "sorted/a0/conf": "IdentityFile /keys/a0\n",
    });
    expect(await agree(main, "x")).toMatchObject({
      user: "from-a-b",
      identityfile: ["/keys/a-b", "/keys/a", "/keys/a0"],
    });
  });

  it("Include: 16 levels deep is read, a directory is read as empty, a missing argument is an error", async () => {
    const files: Record<string, string> = {};
    for (let level = 0; level < 16; level++) files[`deep/${level}`] = `Include @DIR@/deep/${level + 1}\n`;
    files["deep/16"] = "Port 1616\n";
    const deep = write(files);
    expect(await agree(deep, "x")).toMatchObject({ port: "1616" });
    expect(await agree(write({ "deeper/config": "Include @DIR@/deep/0\n" }), "x")).toBe("error");
    mkdirSync(join(dir, "incdir/sub"), { recursive: true });
    expect(await agree(write({ "incdir/config": "Include @DIR@/incdir/sub\nPort 1234\n" }), "x")).toMatchObject({
      port: "1234",
    });
    // The ssh-config package would take the next line as the value of a keyword alone on its line.
    const bare = [
      "Include\n",
      "Include\nPort 1\n",
      "Host x\n  Include\n  Port 1\n",
      "Port\nUser u\n",
      'Include ""\n',
      "Include =  \nPort 1\n",
      "Host x\n  Port =\n  User u\n",
    ];
    for (const text of bare) {
      expect(await agree(write({ "noarg/config": text }), "x"), text).toBe("error");
    }
  });

  it("Match: no criterion, a criterion without its argument, or all with another criterion is an error", async () => {
    for (const [name, line] of [
      ["none", "Match"],
      ["noarg", "Match host"],
      ["allplus", "Match all host x"],
      ["twoall", "Match host x user root all"],
      ["canonicaltwoall", "Match canonical host x all"],
      ["allall", "Match all all"],
    ]) {
      expect(await agree(write({ [`bad-${name}/config`]: `${line}\n  Port 1\n` }), "x"), line).toBe("error");
    }
    // `all` last after one other criterion of any kind is accepted (OpenSSH 9.2).
    for (const [name, line, port] of [
      ["canonicalall", "Match canonical all", "22"],
      ["finalall", "Match final all", "3"],
      ["hostall", "Match host x all", "3"],
      ["otherall", "Match host y all", "22"],
      ["negatedall", "Match !host y all", "3"],
    ]) {
      expect(await agree(write({ [`${name}/config`]: `${line}\n  Port 3\n` }), "x"), line).toMatchObject({ port });
    }
  });

  it("Match host and originalhost ignore case, user and localuser do not; HostName's %h and %% count", async () => {
    const main = write({
      "case/config": [
        "Host box",
        "  HostName %h.example%%",
        "Match host BOX.example%",
        "  Port 2301",
        "Match originalhost BoX",
        "  ServerAliveInterval 8",
        `Match user ${me.toUpperCase()}`,
        "  ConnectTimeout 5",
        `Match localuser ${me.toUpperCase()}`,
        "  ServerAliveCountMax 9",
        `Match localuser ${me}`,
        "  HostKeyAlias mine",
        "",
      ].join("\n"),
    });
    expect(await agree(main, "box")).toMatchObject({
      port: "2301",
      serveraliveinterval: "8",
      connecttimeout: "none",
      serveralivecountmax: "3",
      hostkeyalias: "mine",
    });
  });
});
