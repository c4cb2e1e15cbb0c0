/**
 * Known-hosts files in OpenSSH's format, read and written by Outpost: host patterns, negation, hashed names,
 * `[host]:port`, markers, and updates that keep every other line. Keys and hashed lines come from ssh-keygen.
 */
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { needTool } from "../../tools/system-tools.js";
import { HostKeyChangedError, HostKeyUnknownError } from "../src/ssh/errors.js";
import {
  addHostKey,
  checkHostKey,
  fingerprintOf,
  keyTypeOf,
  knownHostsName,
  matchPattern,
  readTrust,
  removeHost,
  trustedKeyTypes,
  updateKnownHosts,
} from "../src/ssh/known-hosts.js";

const dir = mkdtempSync(join(tmpdir(), "outpost-known-hosts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function newKey(name: string): { line: string; blob: Buffer; fingerprint: string } {
  const file = join(dir, name);
  execFileSync(needTool("ssh-keygen"), ["-q", "-t", "ed25519", "-N", "", "-f", file]);
  const line = readFileSync(`${file}.pub`, "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
  const fingerprint = execFileSync(needTool("ssh-keygen"), ["-l", "-E", "sha256", "-f", `${file}.pub`], {
    encoding: "utf8",
  }).split(/\s+/)[1];
  return { line, blob: Buffer.from(line.split(" ")[1], "base64"), fingerprint };
}

const a = newKey("a");
const b = newKey("b");

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("known hosts", () => {
  it("names hosts as OpenSSH does and fingerprints keys as ssh-keygen does", () => {
    expect(knownHostsName("Example.COM", 22)).toBe("example.com");
    expect(knownHostsName("127.0.0.1", 2222)).toBe("[127.0.0.1]:2222");
    expect(fingerprintOf(a.blob)).toBe(a.fingerprint);
  });

  it("matches plain lists, wildcards, negations and [host]:port entries", async () => {
    const path = file(
      "patterns",
      [
        `# comment`,
        `alpha,beta ${a.line}`,
        `*.example.com,!bad.example.com ${a.line}`,
        `[127.0.0.1]:2222 ${b.line} a comment`,
        `garbage line`,
        "",
      ].join("\n"),
    );
    const trusts = async (name: string) => (await readTrust([path], name)).keys.get("ssh-ed25519") ?? [];
    expect(await trusts("beta")).toEqual([a.blob]);
    expect(await trusts("www.example.com")).toEqual([a.blob]);
    expect(await trusts("bad.example.com")).toEqual([]);
    expect(await trusts("[127.0.0.1]:2222")).toEqual([b.blob]);
    expect(await trusts("127.0.0.1")).toEqual([]);
    expect(await trusts("gamma")).toEqual([]);
  });

  it("reads hashed entries written by ssh-keygen -H", async () => {
    const path = file("hashed", `[10.0.0.1]:2200 ${a.line}\nplain.host ${b.line}\n`);
    execFileSync(needTool("ssh-keygen"), ["-H", "-f", path], { stdio: "ignore" });
    expect(readFileSync(path, "utf8")).not.toContain("10.0.0.1");
    expect((await readTrust([path], "[10.0.0.1]:2200")).keys.get("ssh-ed25519")).toEqual([a.blob]);
    expect((await readTrust([path], "plain.host")).keys.get("ssh-ed25519")).toEqual([b.blob]);
    expect((await readTrust([path], "10.0.0.1")).keys.size).toBe(0);
  });

  it("judges a key: trusted, unknown, changed, revoked; @cert-authority lines are not host keys", async () => {
    const path = file(
      "verdicts",
      `host ${a.line}\n@cert-authority host ${b.line}\n@revoked other ${b.line}\nother ${b.line}\n`,
    );
    const host = await readTrust([path], "host");
    expect(checkHostKey(host, a.blob)).toBeUndefined();
    const changed = checkHostKey(host, b.blob);
    expect(changed).toBeInstanceOf(HostKeyChangedError);
    expect((changed as HostKeyChangedError).knownFingerprints).toEqual([a.fingerprint]);
    expect((changed as HostKeyChangedError).fingerprint).toBe(b.fingerprint);
    const unknown = checkHostKey(await readTrust([path], "nobody"), a.blob);
    expect(unknown).toBeInstanceOf(HostKeyUnknownError);
    expect((unknown as HostKeyUnknownError).fingerprint).toBe(a.fingerprint);
    expect(checkHostKey(await readTrust([path], "other"), b.blob)?.code).toBe("host_key_revoked");
  });

  it("adds once and removes only the host's own entries, keeping every other line", async () => {
    const path = file("updates", `# keep me\nother ${b.line}\n`);
    await Promise.all([
      addHostKey(path, "[h]:1", a.blob),
      addHostKey(path, "[h]:1", a.blob),
      addHostKey(path, "x", b.blob),
    ]);
    const added = readFileSync(path, "utf8").trim().split("\n");
    expect(added.slice(0, 2)).toEqual(["# keep me", `other ${b.line}`]);
    expect(added.slice(2).sort()).toEqual([`[h]:1 ${a.line}`, `x ${b.line}`].sort());
    await removeHost(path, "[h]:1");
    expect(readFileSync(path, "utf8")).toBe(`# keep me\nother ${b.line}\nx ${b.line}\n`);
  });

  it("fails, and never rewrites, when a trust file cannot be read", async () => {
    const path = join(dir, "a-directory");
    execFileSync("mkdir", ["-p", path]);
    await expect(readTrust([path], "host")).rejects.toMatchObject({ code: "known_hosts" });
    await expect(addHostKey(path, "host", a.blob)).rejects.toMatchObject({ code: "known_hosts" });
  });

  it("reads a key blob's type only from a well-formed SSH string of 1..64 bytes", () => {
    const blob = (length: number, body: string) => {
      const head = Buffer.alloc(4);
      head.writeUInt32BE(length);
      return Buffer.concat([head, Buffer.from(body, "latin1")]);
    };
    expect(keyTypeOf(a.blob)).toBe("ssh-ed25519");
    expect(keyTypeOf(Buffer.from([0, 0, 0]))).toBe("");
    expect(keyTypeOf(blob(0, "rest"))).toBe("");
    // The type alone, nothing after it, is still a type.
    expect(keyTypeOf(blob(3, "abc"))).toBe("abc");
    expect(keyTypeOf(blob(64, "t".repeat(64)))).toBe("t".repeat(64));
    expect(keyTypeOf(blob(65, "t".repeat(70)))).toBe("");
    // A length past the end of the blob is malformed, not a shorter type.
    expect(keyTypeOf(blob(10, "abc"))).toBe("");
    // A view into a larger buffer is read from its own start.
    const framed = Buffer.concat([Buffer.from("xxxx"), blob(3, "abc")]);
    expect(keyTypeOf(framed.subarray(4))).toBe("abc");
  });

  it("skips comments, unknown markers, short lines and keys of another type than their line says", async () => {
    const [, key] = a.line.split(" ");
    const path = file(
      "malformed",
      [
        `#alpha ssh-ed25519 ${key}`,
        `@future alpha ssh-ed25519 ${key}`,
        "alpha ssh-ed25519",
        `alpha ssh-rsa ${key}`,
        `alpha ssh-ed25519 ${Buffer.from("not a key").toString("base64")}`,
        `@revoked beta ssh-rsa ${key}`,
        "",
      ].join("\n"),
    );
    for (const name of ["#alpha", "alpha", "@future"]) expect((await readTrust([path], name)).keys.size).toBe(0);
    expect((await readTrust([path], "beta")).revoked).toEqual([]);
  });

  it("splits a line at any run of blanks, leading ones included, as OpenSSH does", async () => {
    const [type, key] = a.line.split(" ");
    const path = file("blanks", `  \talpha \t ${type}   ${key}  comment\n`);
    expect((await readTrust([path], "alpha")).keys.get("ssh-ed25519")).toEqual([a.blob]);
  });

  it("keeps a key found in several files once, and reports the trusted key types", async () => {
    const one = file("one", `host ${a.line}\n`);
    const two = file("two", `host,other ${a.line}\nhost ${b.line}\n`);
    const trust = await readTrust([one, two], "host");
    expect(trust.keys.get("ssh-ed25519")).toEqual([a.blob, b.blob]);
    expect(trustedKeyTypes(trust)).toEqual(["ssh-ed25519"]);
    expect(trustedKeyTypes(await readTrust([one], "nobody"))).toEqual([]);
  });

  it("reads only version 1 of hashed host fields", async () => {
    const salt = Buffer.from("0123456789abcdef0123");
    const hash = createHmac("sha1", salt).update("hashed.host").digest();
    const field = (version: string) => `|${version}|${salt.toString("base64")}|${hash.toString("base64")}`;
    const path = file("versions", `${field("1")} ${a.line}\n${field("2")} ${b.line}\n${field("1")}|x ${b.line}\n`);
    expect((await readTrust([path], "hashed.host")).keys.get("ssh-ed25519")).toEqual([a.blob]);
  });

  it("matches patterns on the whole name, any character included", () => {
    expect(matchPattern("*", "a\nb")).toBe(true);
    expect(matchPattern("h?st", "host")).toBe(true);
    expect(matchPattern("h?st", "hoost")).toBe(false);
    expect(matchPattern("host", "myhost")).toBe(false);
    expect(matchPattern("a.b", "axb")).toBe(false);
  });

  it("trusts any of several keys of one type for a host", async () => {
    const path = file("rotation", `host ${a.line}\nhost ${b.line}\n`);
    const trust = await readTrust([path], "host");
    expect(checkHostKey(trust, a.blob)).toBeUndefined();
    expect(checkHostKey(trust, b.blob)).toBeUndefined();
  });

  it("keeps blank lines, a last line without a newline, and @revoked entries when it rewrites", async () => {
    const path = file("keep", `# head\n\nother ${b.line}\n@revoked h ${b.line}\nh ${a.line}\nlast ${a.line}`);
    await removeHost(path, "h");
    expect(readFileSync(path, "utf8")).toBe(`# head\n\nother ${b.line}\n@revoked h ${b.line}\nlast ${a.line}\n`);
    const only = file("only", `h ${a.line}\n`);
    await removeHost(only, "h");
    expect(readFileSync(only, "utf8")).toBe("");
  });

  it("waits for a lock another process holds, and leaves no descriptor open", async () => {
    const path = file("locked", "");
    const lock = `${path}.lock`;
    writeFileSync(lock, "12345\n");
    setTimeout(() => unlinkSync(lock), 300);
    const descriptors = readdirSync("/proc/self/fd").length;
    await addHostKey(path, "h", a.blob);
    expect(readFileSync(path, "utf8")).toBe(`h ${a.line}\n`);
    expect(existsSync(lock)).toBe(false);
    for (let i = 0; i < 20; i++) await addHostKey(path, `h${i}`, a.blob);
    expect(readdirSync("/proc/self/fd").length).toBeLessThanOrEqual(descriptors);
  });

  it("runs an update queued behind one that failed", async () => {
    const path = file("queued", "");
    const failing = updateKnownHosts(path, () => {
      throw new Error("change failed");
    });
    const next = updateKnownHosts(path, (lines) => [...lines, "after"]);
    await expect(failing).rejects.toMatchObject({ code: "known_hosts" });
    await next;
    expect(readFileSync(path, "utf8")).toBe("after\n");
  });
});
