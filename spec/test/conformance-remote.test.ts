/** The conformance suite against the RemoteExecutionEnv target, then a check that no command outlived its case. */
import { registerConformance } from "@outpost/spec/conformance";
import { afterAll, describe, expect, it } from "vitest";
import { removeSandbox, target, waitForNoLeftovers } from "./targets.js";

const subject = target("RemoteExecutionEnv");

registerConformance({ describe, it }, subject.name, { withEnv: subject.withEnv });

describe(`${subject.name}: processes`, () => {
  it("leaves no process of any case running", async () => {
    expect(await waitForNoLeftovers()).toEqual([]);
  });
});

afterAll(async () => {
  await subject.close();
  removeSandbox();
});
