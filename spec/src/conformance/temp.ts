/** createTempDir and createTempFile. */
import { posix, win32 } from "node:path";
import type { ExecutionEnv } from "@outpost/sdk";
import { aborted, assert, fails, live, present, script, value } from "./support.js";
import type { Define, Setup } from "./types.js";

const alnum6 = "[A-Za-z0-9]{6}";
const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";

function regexQuote(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The target's temp directory, learnt from a default `createTempDir` (removed again). */
async function tmpdirOf(env: ExecutionEnv, path: typeof posix): Promise<string> {
  const probe = value(await env.createTempDir(undefined, live), "createTempDir");
  value(await env.remove(probe, { recursive: true }, live), "remove probe");
  return path.dirname(probe);
}

/** Registers the temp-file cases. */
export function tempCases(setup: Setup, define: Define): void {
  // The target's path flavour (WIN1): Node joins with it, so every expected path uses its separator.
  const flavour = setup.windows ? win32 : posix;
  const sep = regexQuote(flavour.sep);
  define(
    "createTempDir makes a fresh private directory named <prefix> + 6 alphanumerics in tmpdir",
    "T2 T4",
    async (env) => {
      const first = value(await env.createTempDir(undefined, live), "default prefix");
      const second = value(await env.createTempDir("tmp-", live), "tmp-");
      const custom = value(await env.createTempDir("outpost-x.", live), "custom prefix");
      const absolute = value(await env.createTempDir("/abs-", live), "absolute-looking prefix");
      try {
        const tmpdir = flavour.dirname(first);
        assert.ok(flavour.isAbsolute(tmpdir), "absolute");
        assert.match(flavour.basename(first), new RegExp(`^tmp-${alnum6}$`));
        assert.notEqual(first, second);
        assert.match(second, new RegExp(`^${regexQuote(tmpdir)}${sep}tmp-${alnum6}$`));
        assert.match(custom, new RegExp(`^${regexQuote(tmpdir)}${sep}outpost-x\\.${alnum6}$`));
        assert.match(
          absolute,
          new RegExp(`^${regexQuote(tmpdir)}${sep}abs-${alnum6}$`),
          "a leading / stays inside tmpdir",
        );
        assert.equal(value(await env.fileInfo(first, live), "fileInfo").kind, "directory");
        assert.deepEqual(value(await env.listDir(first, live), "listDir"), []);
        if (setup.linux) assert.equal((await script(setup, env, `stat -c %a '${first}'`)).trim(), "700");
      } finally {
        for (const dir of [first, second, custom, absolute])
          await env.remove(dir, { recursive: true, force: true }, live);
      }
    },
  );

  define("createTempDir joins the prefix to tmpdir like path.join", "T2 E5 A3 ND7", async (env) => {
    const tmpdir = await tmpdirOf(env, flavour);
    const sibling = value(await env.createTempDir("", live), "empty prefix");
    const escaped = value(await env.createTempDir("../outpost-up-", live), "../ prefix");
    try {
      assert.match(
        sibling,
        new RegExp(`^${regexQuote(tmpdir)}${alnum6}$`),
        "an empty prefix makes a sibling of tmpdir",
      );
      assert.match(escaped, new RegExp(`^${regexQuote(flavour.join(tmpdir, "../outpost-up-"))}${alnum6}$`));
      assert.equal(await present(env, sibling), true);
      assert.equal(await present(env, escaped), true);
    } finally {
      await env.remove(sibling, { recursive: true, force: true }, live);
      await env.remove(escaped, { recursive: true, force: true }, live);
    }
    const missing = fails(await env.createTempDir("outpost-missing-sub/", live), "not_found", "missing subdirectory");
    assert.match(
      String(missing.path),
      new RegExp(`^${regexQuote(tmpdir)}${sep}outpost-missing-sub${sep}${alnum6}$`),
      "the template path",
    );
    fails(await env.createTempDir(undefined, aborted()), "aborted", "aborted", { none: true });
  });

  define(
    "the temp directory is TMPDIR, TMP or TEMP (first non-empty) without a trailing slash, else /tmp",
    "T1 WIN13",
    async (env) => {
      if (setup.windows) {
        // T1's Windows branch: TEMP, TMP, then %SystemRoot%\temp; a trailing \ goes unless it is a drive root.
        const vars = await script(setup, env, 'printf "%s\\n%s\\n%s" "$TEMP" "$TMP" "$SystemRoot"');
        const [temp = "", tmp = "", root = ""] = vars.split("\n");
        const chosen = temp || tmp || `${root}\\temp`;
        const expected = /^[A-Za-z]:\\$/.test(chosen) ? chosen : chosen.replace(/\\$/, "");
        assert.equal(await tmpdirOf(env, flavour), expected);
        return;
      }
      const vars = await script(setup, env, 'printf "%s\\n%s\\n%s" "$TMPDIR" "$TMP" "$TEMP"');
      const chosen = vars.split("\n").find((entry) => entry !== "") ?? "/tmp";
      const expected = chosen.length > 1 ? chosen.replace(/\/$/, "") : chosen;
      assert.equal(await tmpdirOf(env, flavour), expected);
    },
  );

  define(
    "createTempFile makes an empty file <prefix><uuid><suffix> in a fresh tmp- directory",
    "T3 T5",
    async (env) => {
      const tmpdir = await tmpdirOf(env, flavour);
      const plain = value(await env.createTempFile(undefined, live), "no options");
      const named = value(await env.createTempFile({ prefix: "out-", suffix: ".log" }, live), "prefix and suffix");
      try {
        assert.match(plain, new RegExp(`^${regexQuote(tmpdir)}${sep}tmp-${alnum6}${sep}${uuid}$`));
        assert.match(named, new RegExp(`^${regexQuote(tmpdir)}${sep}tmp-${alnum6}${sep}out-${uuid}\\.log$`));
        assert.notEqual(flavour.dirname(plain), flavour.dirname(named), "every call has its own directory");
        const info = value(await env.fileInfo(plain, live), "fileInfo");
        assert.deepEqual([info.kind, info.size], ["file", 0]);
        assert.deepEqual(
          value(await env.listDir(flavour.dirname(named), live), "listDir").map((entry) => entry.name),
          [flavour.basename(named)],
        );
      } finally {
        await env.remove(flavour.dirname(plain), { recursive: true, force: true }, live);
        await env.remove(flavour.dirname(named), { recursive: true, force: true }, live);
      }
    },
  );

  define(
    "createTempFile whose file cannot be created fails naming the file and leaves its directory",
    "T3 T5",
    async (env) => {
      const tmpdir = await tmpdirOf(env, flavour);
      const prefix = "n".repeat(300);
      const error = fails(await env.createTempFile({ prefix }, live), "unknown", "a name too long");
      const path = String(error.path);
      assert.match(path, new RegExp(`^${regexQuote(tmpdir)}${sep}tmp-${alnum6}${sep}${prefix}${uuid}$`), "the file");
      if (!setup.windows) assert.match(error.message, /ENAMETOOLONG/);
      const left = flavour.dirname(path);
      try {
        assert.deepEqual(value(await env.listDir(left, live), "the tmp- directory stays, empty"), []);
      } finally {
        await env.remove(left, { recursive: true, force: true }, live);
      }
    },
  );

  define(
    "createTempFile with a prefix naming a missing directory fails and leaves its directory",
    "T3 E5 A3 ND7",
    async (env) => {
      const tmpdir = await tmpdirOf(env, flavour);
      const error = fails(await env.createTempFile({ prefix: "sub/" }, live), "not_found", "sub/ prefix");
      const path = String(error.path);
      assert.match(
        path,
        new RegExp(`^${regexQuote(tmpdir)}${sep}tmp-${alnum6}${sep}sub${sep}${uuid}$`),
        "the file path",
      );
      const left = flavour.dirname(flavour.dirname(path));
      try {
        assert.equal(value(await env.fileInfo(left, live), "the tmp- directory stays").kind, "directory");
      } finally {
        await env.remove(left, { recursive: true, force: true }, live);
      }
      fails(await env.createTempFile({ prefix: "x" }, aborted()), "aborted", "aborted", { none: true });
    },
  );
}
