// The fallbacks for an engine without the editor features, against a stand-in `send` that
// answers as such an engine does (method not found for the newer methods); and the index as
// the views read it from each answer the engine can give.

import assert from "node:assert/strict";
import { test } from "node:test";

import { EngineCommands, Methods } from "../protocol";
import {
  EXECUTE_COMMAND,
  NO_INDEX_MARKER,
  Send,
  executeEngineCommand,
  recordIndex,
  recordText,
} from "../wire";

function olderEngine(answers: Record<string, unknown>): { send: Send; calls: string[] } {
  const calls: string[] = [];
  const send = async <R>(method: string, params: object): Promise<R> => {
    calls.push(`${method} ${JSON.stringify(params)}`);
    if (!(method in answers)) {
      throw Object.assign(new Error("Method Not Found"), { code: -32601 });
    }
    return answers[method] as R;
  };
  return { send, calls };
}

test("a command goes to workspace/executeCommand with its argument in a list", async () => {
  const { send, calls } = olderEngine({ [EXECUTE_COMMAND]: { revision: 2 } });
  const result = await executeEngineCommand(send, EngineCommands.remove, { name: "x" });
  assert.deepEqual(result, { revision: 2 });
  assert.deepEqual(calls, [
    `${EXECUTE_COMMAND} {"command":"lazy-memory.rm","arguments":[{"name":"x"}]}`,
  ]);
});

test("without executeCommand each command falls back to its custom request", async () => {
  const { send, calls } = olderEngine({ [Methods.doctor]: { advice: "ok" }, [Methods.save]: {} });
  assert.deepEqual(await executeEngineCommand(send, EngineCommands.doctor), { advice: "ok" });
  await executeEngineCommand(send, EngineCommands.save, { name: "n" });
  assert.deepEqual(calls, [
    `${EXECUTE_COMMAND} {"command":"lazy-memory.doctor","arguments":[]}`,
    `${Methods.doctor} {}`,
    `${EXECUTE_COMMAND} {"command":"lazy-memory.save","arguments":[{"name":"n"}]}`,
    `${Methods.save} {"name":"n"}`,
  ]);
});

test("the engine's other errors are not retried", async () => {
  const send: Send = async () => {
    throw Object.assign(new Error("agents cannot write"), { code: -32013 });
  };
  await assert.rejects(executeEngineCommand(send, EngineCommands.save, {}), /agents cannot write/);
});

test("a record's text comes from lazy/memory/document, else is rendered from recall", async () => {
  const newer = olderEngine({ [Methods.document]: { text: "# from the engine" } });
  assert.equal(await recordText(newer.send, "x"), "# from the engine");
  assert.deepEqual(newer.calls, [`${Methods.document} {"uri":"lazy-memory:x"}`]);
  const record = { name: "x", type: "user", description: "d", revision: 1, body: "the body" };
  const older = olderEngine({ [Methods.recall]: { record } });
  const text = await recordText(older.send, "x");
  assert.match(text, /^# x\n/);
  assert.match(text, /the body$/);
  assert.deepEqual(older.calls.slice(1), [`${Methods.recall} {"name":"x"}`]);
});

test("the index is the records, or the marker: never empty for an unreadable store", async () => {
  const record = { name: "x", type: "user", description: "d", revision: 1 };
  const marker = "MEMORY INDEX UNAVAILABLE (file is not a database)\nMemory records may exist...";
  const answers = [
    [{ records: [record] }, { records: [record] }],
    [{ records: [] }, { records: [] }],
    [{ records: null, unavailable: marker, error: "not a database" }, { unavailable: marker }],
    [{ records: null }, { unavailable: NO_INDEX_MARKER }],
    [{}, { unavailable: NO_INDEX_MARKER }],
  ];
  for (const [answer, shown] of answers) {
    const { send, calls } = olderEngine({ [Methods.recall]: answer });
    assert.deepEqual(await recordIndex(send), shown);
    assert.deepEqual(calls, [`${Methods.recall} {}`]);
  }
});
