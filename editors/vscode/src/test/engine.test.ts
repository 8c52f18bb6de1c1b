// The extension's wire helpers against the real engine, started the way the extension starts
// it (engineLaunch), over vscode-jsonrpc, the library under vscode-languageclient.
// LAZY_TEST_ENGINE_COMMAND (a JSON list, e.g. ["python3", "-m", "lazy_memory.rpc.cli",
// "engine"]) names the engine; without it these tests are skipped.

import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import {
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";

import { engineLaunch } from "../engineLaunch";
import { describeError } from "../errors";
import {
  EngineCommands,
  FullRecord,
  Methods,
  RecallAllResult,
  RecordChange,
  SearchResult,
} from "../protocol";
import { groupByType } from "../records";
import { Send, executeEngineCommand, recordText } from "../wire";

const configured = process.env.LAZY_TEST_ENGINE_COMMAND;
const skip = configured ? false : "LAZY_TEST_ENGINE_COMMAND is not set";

let project: string;
let engine: ChildProcess;
let connection: MessageConnection;
let stderr = "";
let capabilities: { executeCommandProvider?: { commands?: string[] } } = {};
const changes: RecordChange[] = [];
const send: Send = <R>(method: string, params: object) =>
  connection.sendRequest(method, params) as Promise<R>;

before(async () => {
  if (!configured) {
    return;
  }
  project = fs.mkdtempSync(path.join(os.tmpdir(), "lazy-vscode-"));
  fs.mkdirSync(path.join(project, ".git"));
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("LAZY_")),
  );
  const launch = engineLaunch(
    { engineCommand: JSON.parse(configured), dataDirectory: "store" },
    inherited,
    project,
  );
  assert.deepEqual(launch.warnings, []);
  engine = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env });
  engine.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  connection = createMessageConnection(
    new StreamMessageReader(engine.stdout!),
    new StreamMessageWriter(engine.stdin!),
  );
  connection.onNotification(Methods.changed, (change: RecordChange) => changes.push(change));
  connection.listen();
  const initialized = await connection.sendRequest<{ capabilities: typeof capabilities }>(
    "initialize",
    { processId: process.pid, rootUri: null, capabilities: {} },
  );
  capabilities = initialized.capabilities;
  await connection.sendNotification("initialized", {});
});

after(async () => {
  if (!configured) {
    return;
  }
  try {
    await connection.sendRequest("shutdown");
    await connection.sendNotification("exit");
  } finally {
    connection.dispose();
    const exited = new Promise((resolve) => engine.once("exit", resolve));
    setTimeout(() => engine.kill(), 5000).unref();
    await exited;
    fs.rmSync(project, { recursive: true, force: true });
  }
});

test("the engine announces the commands the extension sends", { skip }, () => {
  const announced = capabilities.executeCommandProvider?.commands ?? [];
  for (const command of Object.values(EngineCommands)) {
    assert.ok(announced.includes(command), `${command} is not in ${JSON.stringify(announced)}`);
  }
});

test("an empty store recalls no records", { skip }, async () => {
  const result = await send<RecallAllResult>(Methods.recall, {});
  assert.deepEqual(groupByType(result.records), [], stderr);
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
  const result = await send<RecallAllResult>(Methods.recall, {});
  assert.deepEqual(
    groupByType(result.records).map((group) => [group.type, group.records.map((r) => r.name)]),
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
  assert.ok(fs.existsSync(path.join(project, "store")), "no store/ in the project");
  assert.ok(!fs.existsSync(path.join(project, ".lazy")), "the default .lazy/ was used");
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
  const result = await send<RecallAllResult>(Methods.recall, {});
  assert.deepEqual(
    result.records.map((record) => record.name).sort(),
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
