// Reading the agent's replies (sdk/src/wire/wire.ts): a reply of the wrong shape fails with a clear "Malformed agent
// reply" error naming the field, never with a TypeError later or a wrong value.
import { describe, expect, it } from "vitest";
import {
  infoOfReply,
  nameBytes,
  numberField,
  objectField,
  parseEntries,
  parseInfo,
  stringField,
} from "../src/wire/wire.js";

const info = { kind: "file", size: 3, mtimeSec: 1, mtimeNsec: 2 };

describe("required fields", () => {
  it("returns a field of the right type and names one of the wrong type", () => {
    expect(numberField({ n: 0 }, "n")).toBe(0);
    expect(stringField({ s: "" }, "s")).toBe("");
    expect(objectField({ o: { a: 1 } }, "o")).toEqual({ a: 1 });
    expect(() => numberField({ n: "1" }, "n")).toThrow("Malformed agent reply: 'n' is not a number");
    expect(() => numberField({}, "n")).toThrow("'n' is not a number");
    expect(() => stringField({ s: 1 }, "s")).toThrow("Malformed agent reply: 's' is not a string");
    expect(() => objectField({ o: [1] }, "o")).toThrow("Malformed agent reply: 'o' is not an object");
    expect(() => objectField({ o: null }, "o")).toThrow("'o' is not an object");
  });
});

describe("infos", () => {
  it("takes the four fields of an info, bare or wrapped as `info`", () => {
    expect(parseInfo(info)).toEqual(info);
    expect(infoOfReply({ info })).toEqual(info);
    expect(infoOfReply(info)).toEqual(info);
  });

  it("refuses an unknown kind and a missing or mistyped number", () => {
    expect(() => parseInfo({ ...info, kind: "fifo" })).toThrow("Malformed agent reply: unknown kind 'fifo'");
    expect(() => parseInfo({ ...info, kind: 1 })).toThrow("'kind' is not a string");
    for (const key of ["size", "mtimeSec", "mtimeNsec"]) {
      expect(() => parseInfo({ ...info, [key]: "1" })).toThrow(`'${key}' is not a number`);
    }
  });
});

describe("directory entries", () => {
  it("reads names, raw name bytes, infos and errors", () => {
    const entries = parseEntries({
      entries: [
        { name: "a", info },
        { name: "b\uFFFD", raw: [98, 0, 255], error: { code: "ENOENT" } },
        { name: "c", raw: null, info: "not an object", error: [] },
      ],
    });
    expect(entries).toEqual([
      { name: "a", raw: undefined, info, error: undefined },
      { name: "b\uFFFD", raw: new Uint8Array([98, 0, 255]), info: undefined, error: { code: "ENOENT" } },
      { name: "c", raw: undefined, info: undefined, error: undefined },
    ]);
    expect([...nameBytes(entries[1])]).toEqual([98, 0, 255]);
    expect([...nameBytes(entries[0])]).toEqual([97]);
  });

  it("refuses a page that is not a list of entry objects", () => {
    expect(() => parseEntries({})).toThrow("Malformed agent reply: 'entries' is not an array");
    expect(() => parseEntries({ entries: [1] })).toThrow("Malformed agent reply: a directory entry is not an object");
    expect(() => parseEntries({ entries: [{ raw: [] }] })).toThrow("'name' is not a string");
  });

  it("refuses raw name bytes that are not all bytes", () => {
    for (const raw of [[256], [-1], [1.5], ["a"], [0, 255, 256], "ab", { 0: 1 }]) {
      expect(() => parseEntries({ entries: [{ name: "x", raw }] }), JSON.stringify(raw)).toThrow(
        "Malformed agent reply: 'raw' is not an array of bytes",
      );
    }
    expect(parseEntries({ entries: [{ name: "x", raw: [0, 255] }] })[0].raw).toEqual(new Uint8Array([0, 255]));
  });
});
