/**
 * The fixed scenario of the differential tests: one tree, built the same way wherever a test needs a copy — a
 * `.gitignore`, nested and hidden directories, a UTF-8 file with a BOM, a file without a final newline, a 3,000-line
 * file, a binary file, a PNG, a FIFO, a name that is not UTF-8, symbolic links (one dangling).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { needTool } from "../../../tools/system-tools.js";

/** A 1×1 PNG. */
const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** The raw name that is not UTF-8: `bad-\xFF.txt`. */
export const NON_UTF8_NAME = Buffer.concat([Buffer.from("bad-"), Buffer.from([0xff]), Buffer.from(".txt")]);

/** Lines of the 3,000-line file: every 7th mentions the needle. */
function bigFile(): string {
  const lines: string[] = [];
  for (let n = 1; n <= 3000; n++) lines.push(n % 7 === 0 ? `line ${n} has a needle` : `line ${n}`);
  return `${lines.join("\n")}\n`;
}

/** Builds the scenario in `root` (an existing, empty directory). */
export function buildScenario(root: string): void {
  // A repository, as most trees an agent works on are: fd and ripgrep honour `.gitignore` there whatever their version.
  execFileSync(needTool("git"), ["init", "-q", root]);
  const file = (path: string, content: string | Buffer) => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  file(".gitignore", "ignored.txt\nbuild/\n");
  file("ignored.txt", "needle in an ignored file\n");
  file("build/out.txt", "needle in an ignored directory\n");
  file(".hidden/secret.txt", "a hidden needle\n");
  file("src/main.ts", 'export const needle = "main";\nconst Alpha = 1;\n\tconst tabbed = "a.b";\n');
  file("src/util/helper.ts", "// helper\nexport function needle(): number {\n  return 42;\n}\n");
  file("src/util/deep/deeper.txt", "deep NEEDLE line\ncrlf line\r\nlast\r\n");
  file("bom.txt", "\uFEFFhello with a BOM\nsecond line\n");
  file("nofinal.txt", "alpha\nbeta\ngamma");
  file("big.txt", bigFile());
  file("binary.bin", Buffer.from([0x00, 0x01, 0x02, 0xff, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x0a]));
  file("image.png", Buffer.from(PNG_1X1, "base64"));
  file("edit-me.txt", "one\ntwo\nthree\n");
  file("dup.txt", "foo\nbar\nfoo\n");
  file("long-line.txt", `${"x".repeat(600)} needle\n`);
  writeFileSync(Buffer.concat([Buffer.from(`${root}/`), NON_UTF8_NAME]), "needle behind a name that is not UTF-8\n");
  execFileSync("mkfifo", [join(root, "fifo")]);
  symlinkSync("src", join(root, "link-to-src"));
  symlinkSync("nowhere", join(root, "dangling"));
}

/** A tree with the scenario's names and other contents: what the local disk holds in the remote case. */
export function buildDecoy(root: string): void {
  const file = (path: string, content: string) => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  for (const path of ["nofinal.txt", "big.txt", "bom.txt", "edit-me.txt", "dup.txt", "src/main.ts", "decoy-only.txt"]) {
    file(path, "DECOY needle foo one beta\n");
  }
}
