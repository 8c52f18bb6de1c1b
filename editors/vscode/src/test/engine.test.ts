// The extension's wire helpers against the real engine, started the way the extension starts
// it (runningEngine.ts); without LAZY_TEST_ENGINE_COMMAND these tests are skipped.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";

import { describeError } from "../errors";
import { EngineCommands, FullRecord, Methods, RecordChange, SearchResult } from "../protocol";
import { groupByType } from "../records";
import { Send, executeEngineCommand, recordIndex, recordText } from "../wire";
import { DATA_DIRECTORY, RunningEngine, skip, startEngine } from "./runningEngine";

let engine: RunningEngine;
const changes: RecordChange[] = [];
const send: Send = <R>(method: string, params: object) => engine.send<R>(method, params);

before(async () => {
  if (!skip) {
    engine = await startEngine(undefined, (connection) =>
      connection.onNotification(Methods.changed, (change: RecordChange) => changes.push(change)),
    );
  }
});

after(async () => {
  if (!skip) {
    await engine.stop();
  }
});

test("the engine announces the commands the extension sends", { skip }, () => {
  const announced = engine.capabilities.executeCommandProvider?.commands ?? [];
  for (const command of Object.values(EngineCommands)) {
    assert.ok(announced.includes(command), `${command} is not in ${JSON.stringify(announced)}`);
  }
});

test("an empty store recalls no records, and no marker", { skip }, async () => {
  assert.deepEqual(await recordIndex(send), { records: [] }, engine.stderr());
});

test("saves through the engine's commands, then the tree's groups", { skip }, async () => {
  const records = [
    ["deploy-steps", "project", "How we deploy", "1. build\n2. ship to $STAGE"],
    ["style", "feedback", "Review comments we keep making", "Use early returns."],
    ["api-docs", "project", "Where the API docs live", "See docs/api."],
  ];
  for (const [name, type, description, body] of records) {
    const saved = await executeEngineCommand<FullRecord>(send, EngineCommands.save, {
      name,
      type,
      description,
      body,
    });
    assert.equal(saved.name, name);
    assert.equal(saved.revision, 1);
  }
  const index = await recordIndex(send);
  assert.deepEqual(
    groupByType(index.records ?? []).map((group) => [group.type, group.records.map((r) => r.name)]),
    [
      ["feedback", ["style"]],
      ["project", ["api-docs", "deploy-steps"]],
    ],
  );
});

test("a save is announced with the notification the tree listens to", { skip }, async () => {
  const deadline = Date.now() + 10_000;
  while (!changes.some((change) => change.name === "style") && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(
    changes.some((change) => change.name === "style"),
    `no ${Methods.changed} for style: ${JSON.stringify(changes)}`,
  );
});

test("the data directory setting is where the engine keeps the store", { skip }, () => {
  assert.ok(fs.existsSync(path.join(engine.project, DATA_DIRECTORY)), "no store/ in the project");
  assert.ok(!fs.existsSync(path.join(engine.project, ".lazy")), "the default .lazy/ was used");
});

test("a record's document shows its body and its writer, the human", { skip }, async () => {
  const text = await recordText(send, "deploy-steps");
  assert.match(text, /deploy-steps/);
  assert.match(text, /1\. build\n2\. ship to \$STAGE/);
  assert.ok(text.includes(`last written by human ${os.userInfo().username},`), text);
});

test("a save through the editor command is the human's in the history", { skip }, async () => {
  type Entry = { actor: { kind: string; detail: string } };
  const { entries } = await send<{ entries: Entry[] }>("lazy/memory/history", {
    name: "deploy-steps",
  });
  assert.deepEqual(
    entries.map((entry) => entry.actor),
    [{ kind: "human", detail: os.userInfo().username }],
  );
});

test("search finds a record by a word of its body", { skip }, async () => {
  const { hits } = await send<SearchResult>(Methods.search, { query: "ship", limit: 50 });
  assert.deepEqual(
    hits.map((hit) => hit.name),
    ["deploy-steps"],
  );
});

test("remove takes the record out of the tree", { skip }, async () => {
  await executeEngineCommand(send, EngineCommands.remove, { name: "api-docs" });
  const { records } = await recordIndex(send);
  assert.deepEqual(
    (records ?? []).map((record) => record.name).sort(),
    ["deploy-steps", "style"],
  );
});

test("doctor gives advice", { skip }, async () => {
  const diagnosis = await executeEngineCommand<{ advice: string }>(send, EngineCommands.doctor);
  assert.equal(typeof diagnosis.advice, "string");
  assert.ok(diagnosis.advice.length > 0);
});

test("the engine's errors reach the user with message and type", { skip }, async () => {
  await assert.rejects(
    executeEngineCommand(send, EngineCommands.save, {
      name: "bad/name",
      type: "project",
      description: "x",
      body: "",
    }),
    (error: unknown) => {
      assert.match(describeError(error), /invalid name 'bad\/name'.*\(InvalidRecord\)$/);
      return true;
    },
  );
  await assert.rejects(recordText(send, "no-such-record"), (error: unknown) => {
    assert.match(describeError(error), /no-such-record.*\(NotFound\)$/);
    return true;
  });
});
