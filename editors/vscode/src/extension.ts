// The extension's entry point: the engine, the records view, the record documents and the
// commands, wired together.

import * as vscode from "vscode";

import { Engine } from "./client";
import { registerCommands } from "./commands";
import { RecordDocuments } from "./documents";
import { RECORD_SCHEME } from "./protocol";
import { RecordTree } from "./tree";

let engine: Engine | undefined;

/**
 * VS Code activates the extension only in a workspace holding lazy.toml or .lazy/, or when one
 * of its commands is run. The records view is hidden until then: a visible view would activate
 * it in every workspace. Starting the engine only reads, so activation never creates a store.
 */
export function activate(context: vscode.ExtensionContext): void {
  void vscode.commands.executeCommand("setContext", "lazyMemory.enabled", true);
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
