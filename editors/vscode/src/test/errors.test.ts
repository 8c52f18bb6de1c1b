import assert from "node:assert/strict";
import { test } from "node:test";

import { describeError, errorType, isMethodNotFound } from "../errors";

test("the engine's message comes with the type it names in data", () => {
  const error = { code: -32010, message: "no memory record named x", data: { type: "NotFound" } };
  assert.equal(describeError(error), "no memory record named x (NotFound)");
});

test("without data the type comes from the code", () => {
  assert.equal(errorType({ code: -32013, message: "agents cannot write" }), "PermissionDenied");
  const rejected = { code: -32015, message: "would grow" };
  assert.equal(describeError(rejected), "would grow (CompactRejected)");
});

test("errors that are not the engine's keep their message alone", () => {
  assert.equal(describeError(new Error("spawn lazy ENOENT")), "spawn lazy ENOENT");
  assert.equal(describeError({ code: -32603, message: "boom" }), "boom");
  assert.equal(describeError("plain"), "plain");
  assert.equal(describeError(undefined), "unknown error");
});

test("method not found is -32601", () => {
  assert.ok(isMethodNotFound({ code: -32601, message: "Method Not Found" }));
  assert.ok(!isMethodNotFound({ code: -32010, message: "x" }));
  assert.ok(!isMethodNotFound(new Error("x")));
});
