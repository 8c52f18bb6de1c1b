// Starting and stopping the engine's language client, and the requests the views make.

import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

import { engineLaunch } from "./engineLaunch";
import { describeError } from "./errors";
import { Methods, RecordChange } from "./protocol";
import { RecordIndex, Send, executeEngineCommand, recordIndex, recordText } from "./wire";

function sender(client: LanguageClient): Send {
  return <R>(method: string, params: object) => client.sendRequest<R>(method, params);
}

/** The running engine, as the tree, the documents and the commands see it. */
export class Engine implements vscode.Disposable {
  private starting: Promise<LanguageClient> | undefined;
  private failed = false;
  private readonly changes = new vscode.EventEmitter<RecordChange | undefined>();

  /** A record changed (its name), or the engine (re)started (undefined): show it again. */
  readonly onDidChangeRecords = this.changes.event;

  constructor(private readonly output: vscode.OutputChannel) {}

  /** The started client; starts the engine on first use. */
  start(): Promise<LanguageClient> {
    this.starting ??= this.launch();
    return this.starting;
  }

  /** Start again after a failed start (the Refresh command), leaving a running engine alone. */
  retryIfFailed(): void {
    if (this.failed) {
      this.failed = false;
      this.starting = undefined;
      void this.start().catch(() => undefined);
    }
  }

  /** Stop the engine and start it with the current settings. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    this.failed = false;
    const client = await starting?.catch(() => undefined);
    if (client?.isRunning()) {
      await client.stop();
    }
  }

  /** A custom request (`lazy/...`). */
  async request<R>(method: string, params: object): Promise<R> {
    const client = await this.start();
    return client.sendRequest<R>(method, params);
  }

  /** One of the engine's workspace/executeCommand commands, under its write gate. */
  async executeCommand<R>(command: string, argument?: object): Promise<R> {
    const client = await this.start();
    return executeEngineCommand<R>(sender(client), command, argument);
  }

  /** The live records, or the marker of a store that cannot be read. */
  async recordIndex(): Promise<RecordIndex> {
    const client = await this.start();
    return recordIndex(sender(client));
  }

  /** A record's document text. */
  async recordText(name: string): Promise<string> {
    const client = await this.start();
    return recordText(sender(client), name);
  }

  dispose(): void {
    void this.stop();
    this.changes.dispose();
  }

  private async launch(): Promise<LanguageClient> {
    const settings = vscode.workspace.getConfiguration("lazyMemory");
    const folder = vscode.workspace.workspaceFolders?.find((each) => each.uri.scheme === "file");
    const launch = engineLaunch(
      {
        engineCommand: settings.get("engineCommand"),
        dataDirectory: settings.get("dataDirectory"),
      },
      process.env,
      folder?.uri.fsPath,
    );
    for (const warning of launch.warnings) {
      this.output.appendLine(warning);
      void vscode.window.showWarningMessage(`Lazy Memory: ${warning}`);
    }
    const commandLine = [launch.command, ...launch.args].join(" ");
    this.output.appendLine(`Starting the engine: ${commandLine} (in ${launch.cwd})`);
    // No transport: the client then speaks stdio without adding a --stdio argument.
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd: launch.cwd, env: launch.env },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      outputChannel: this.output,
    };
    const client = new LanguageClient("lazyMemory", "Lazy Memory", serverOptions, clientOptions);
    client.onNotification(Methods.changed, (change: RecordChange) => this.changes.fire(change));
    try {
      await client.start();
    } catch (error) {
      this.failed = true;
      const message =
        `the engine did not start (${commandLine}): ${describeError(error)}. ` +
        "Check the setting lazyMemory.engineCommand.";
      this.output.appendLine(message);
      this.changes.fire(undefined);
      void vscode.window.showErrorMessage(`Lazy Memory: ${message}`);
      throw new Error(message);
    }
    this.changes.fire(undefined);
    return client;
  }
}
