// Reading the agent's hello answer: every field has a default when it is missing or of the wrong type, so an agent
// that reports less (an upstream daemon, an older agent) still connects.
import { describe, expect, it } from "vitest";
import { toRemoteInfo } from "../src/wire/agent-hello.js";

describe("toRemoteInfo", () => {
  it("takes the fields of a complete answer", () => {
    const complete = {
      protocol: 1,
      version: "0.1.0",
      os: "linux",
      arch: "x86_64",
      home: "/home/a",
      separator: "/",
      tmpdir: "/tmp",
      cwd: "/work",
      driveCwds: { D: "D:\\data" },
      pid: 42,
      features: ["readFile", "listFiles"],
    };
    expect(toRemoteInfo(complete)).toEqual(complete);
  });

  it("gives every missing field its empty value, and the separator of the OS", () => {
    expect(toRemoteInfo({})).toEqual({
      protocol: 1,
      version: "",
      os: "",
      arch: "",
      home: "",
      separator: "/",
      tmpdir: "",
      cwd: "",
      driveCwds: {},
      pid: 0,
      features: [],
    });
    expect(toRemoteInfo({ os: "windows" }).separator).toBe("\\");
  });

  it("treats a field of the wrong type as missing, element by element in lists and maps", () => {
    const info = toRemoteInfo({
      version: 1,
      os: ["linux"],
      home: null,
      separator: 0,
      driveCwds: { C: "C:\\", D: 4, E: null },
      pid: "42",
      features: ["readFile", 3, null, "watch"],
    });
    expect(info).toMatchObject({ version: "", os: "", home: "", separator: "/", pid: 0 });
    expect(info.driveCwds).toEqual({ C: "C:\\" });
    expect(info.features).toEqual(["readFile", "watch"]);
    expect(toRemoteInfo({ driveCwds: "C:\\", features: "readFile" })).toMatchObject({ driveCwds: {}, features: [] });
    expect(toRemoteInfo({ driveCwds: null }).driveCwds).toEqual({});
  });
});
