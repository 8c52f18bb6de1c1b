import assert from "node:assert/strict";
import { test } from "node:test";

import {
  descriptionProblem,
  groupByType,
  nameOfPath,
  nameProblem,
  recordUri,
  renderRecord,
} from "../records";

const summary = (name: string, type: string) => ({
  name,
  type,
  description: `about ${name}`,
  revision: 1,
});

test("groupByType puts the four types in order, unknown types after, names sorted", () => {
  const groups = groupByType([
    summary("zeta", "reference"),
    summary("beta", "project"),
    summary("odd", "zz-custom"),
    summary("alpha", "project"),
    summary("me", "user"),
  ]);
  assert.deepEqual(
    groups.map((group) => [group.type, group.records.map((record) => record.name)]),
    [
      ["user", ["me"]],
      ["project", ["alpha", "beta"]],
      ["reference", ["zeta"]],
      ["zz-custom", ["odd"]],
    ],
  );
});

test("groupByType of no records is no groups", () => {
  assert.deepEqual(groupByType([]), []);
});

test("nameProblem accepts the store's names and refuses others", () => {
  const legal = ["a", "deploy-steps", "Release checklist", "배포 절차", "\"Don't\", (v2)"];
  for (const name of [...legal, "x".repeat(200), "😀".repeat(200)]) {
    assert.equal(nameProblem(name), undefined, name);
  }
  const illegal = ["", " ", " lead", "trail ", ".hidden", "a/b", "a\\b", "x".repeat(201)];
  illegal.push("a\tb", "a\x1bb", "a\u202eb", "a\u200bb", "a\u2028b", "a\u00a0b", "\ud800");
  illegal.push("x (User): y");
  for (const name of illegal) {
    assert.match(nameProblem(name) ?? "", /1-200 printable characters/, name);
  }
});

test("descriptionProblem wants one non-empty line of at most 200 characters", () => {
  assert.equal(descriptionProblem("How we deploy"), undefined);
  assert.equal(descriptionProblem("é".repeat(200)), undefined);
  assert.equal(descriptionProblem("😀".repeat(200)), undefined, "code points, not UTF-16 units");
  assert.match(descriptionProblem("  ") ?? "", /one-line summary/);
  assert.match(descriptionProblem("two\nlines") ?? "", /one line/);
  assert.match(descriptionProblem("sep\u2028arated") ?? "", /one line/);
  assert.match(descriptionProblem("x".repeat(201)) ?? "", /201 characters/);
});

test("record URIs are lazy-memory:NAME both ways", () => {
  assert.equal(recordUri("deploy-steps"), "lazy-memory:deploy-steps");
  assert.equal(nameOfPath("deploy-steps"), "deploy-steps");
  assert.equal(nameOfPath("/deploy-steps"), "deploy-steps");
});

test("renderRecord shows name, description, facts and the body", () => {
  const text = renderRecord({
    ...summary("deploy-steps", "project"),
    revision: 3,
    body: "1. build\n2. ship",
    updated_at: "2026-11-30T10:00:00Z",
    updated_by: { kind: "builder", detail: "b-7" },
  });
  assert.match(text, /^# deploy-steps\n/);
  assert.match(text, /_about deploy-steps_/);
  assert.match(text, /- type: project\n- revision: 3\n- last written by: builder:b-7/);
  assert.ok(text.endsWith("1. build\n2. ship"));
});
