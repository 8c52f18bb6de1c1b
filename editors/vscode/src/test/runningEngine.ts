// The real engine, started the way the extension starts it (engineLaunch), in a project of its
// own, over vscode-jsonrpc, the library under vscode-languageclient: for the tests that talk
// to it. LAZY_TEST_ENGINE_COMMAND (a JSON list, e.g. ["python3", "-m", "lazy_memory.rpc.cli",
// "engine"]) names the engine; without it those tests are skipped (`skip`).

import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";

import { engineLaunch } from "../engineLaunch";
import { Send } from "../wire";

const configured = process.env.LAZY_TEST_ENGINE_COMMAND;
export const skip = configured ? false : "LAZY_TEST_ENGINE_COMMAND is not set";

/** The store's folder in the project, as the lazyMemory.dataDirectory setting names it. */
export const DATA_DIRECTORY = "store";

export interface RunningEngine {
  project: string;
  connection: MessageConnection;
  send: Send;
  capabilities: { executeCommandProvider?: { commands?: string[] } };
  /** What the engine wrote to stderr so far. */
  stderr(): string;
  /** shutdown, exit, and the project removed. */
  stop(): Promise<void>;
}

/**
 * The engine in a new project (a git root), initialized. prepare runs on the project first
 * (to put a store in place, say); listen on the connection before it starts listening.
 */
export async function startEngine(
  prepare: (project: string) => void = () => undefined,
  listen: (connection: MessageConnection) => void = () => undefined,
): Promise<RunningEngine> {
  assert.ok(configured, "LAZY_TEST_ENGINE_COMMAND is not set");
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "lazy-vscode-"));
  fs.mkdirSync(path.join(project, ".git"));
  prepare(project);
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("LAZY_")),
  );
  const launch = engineLaunch(
    { engineCommand: JSON.parse(configured), dataDirectory: DATA_DIRECTORY },
    inherited,
    project,
  );
  assert.deepEqual(launch.warnings, []);
  const engine: ChildProcess = spawn(launch.command, launch.args, {
    cwd: launch.cwd,
    env: launch.env,
  });
  let stderr = "";
  engine.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const connection = createMessageConnection(
    new StreamMessageReader(engine.stdout!),
    new StreamMessageWriter(engine.stdin!),
  );
  listen(connection);
  connection.listen();
  const initialized = await connection.sendRequest<{
    capabilities: RunningEngine["capabilities"];
  }>("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
  await connection.sendNotification("initialized", {});
  return {
    project,
    connection,
    send: <R>(method: string, params: object) =>
      connection.sendRequest(method, params) as Promise<R>,
    capabilities: initialized.capabilities,
    stderr: () => stderr,
    stop: async () => {
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
    },
  };
}
