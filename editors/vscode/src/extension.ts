// The extension's entry point: the engine, the records view, the record documents and the
// commands, wired together.

import * as vscode from "vscode";

import { Engine } from "./client";
import { registerCommands } from "./commands";
import { RecordDocuments } from "./documents";
import { RECORD_SCHEME } from "./protocol";
import { RecordTree } from "./tree";

let engine: Engine | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("Lazy Memory");
  engine = new Engine(output);
  const tree = new RecordTree(engine);
  const documents = new RecordDocuments(engine);
  const running = engine;
  context.subscriptions.push(
    output,
    running,
    tree,
    documents,
    vscode.window.createTreeView("lazyMemory.records", {
      treeDataProvider: tree,
      showCollapseAll: true,
    }),
    vscode.workspace.registerTextDocumentContentProvider(RECORD_SCHEME, documents),
    running.onDidChangeRecords((change) => {
      tree.refresh();
      documents.recordChanged(change?.name);
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("lazyMemory")) {
        output.appendLine("Settings changed: restarting the engine.");
        running.restart().catch(() => undefined);
      }
    }),
    ...registerCommands(running, tree),
  );
  running.start().catch(() => undefined);
}

export async function deactivate(): Promise<void> {
  await engine?.stop();
  engine = undefined;
}
