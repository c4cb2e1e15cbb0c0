import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MINIMUM_NODE, unsupportedNode } from "../src/node-version.js";

describe("the Node versions Outpost runs on", () => {
  it("refuses Node 20 and 22 before 22.19 with a message naming both versions, accepts 22.19+, 24 and later", () => {
    expect(unsupportedNode("20.20.2")).toBe(
      "@outpost/sdk needs Node 22.19 or later (22 LTS or 24 LTS); this is Node 20.20.2",
    );
    expect(unsupportedNode("22.18.0")).toContain("this is Node 22.18.0");
    expect(unsupportedNode("21.7.3")).toContain("needs Node 22.19");
    for (const version of ["22.19.0", "22.23.3", "23.0.0", "24.9.0", "26.1.0"]) {
      expect(unsupportedNode(version)).toBeUndefined();
    }
  });

  it("is the `engines` of every published package and of the workspace", () => {
    const engines = `>=${MINIMUM_NODE.major}.${MINIMUM_NODE.minor}.0`;
    for (const file of [
      "package.json",
      "sdk/package.json",
      "cli/package.json",
      "integrations/pi-coding-agent/package.json",
    ]) {
      const manifest = JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), "utf8"));
      expect({ file, engines: manifest.engines?.node }).toEqual({ file, engines });
    }
  });
});
