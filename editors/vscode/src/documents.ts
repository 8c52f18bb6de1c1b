// The read-only `lazy-memory:NAME` documents: a record as markdown, from the engine.

import * as vscode from "vscode";

import { Engine } from "./client";
import { describeError } from "./errors";
import { RECORD_SCHEME } from "./protocol";
import { nameOfPath } from "./records";

/** The VS Code URI of a record's document. */
export function recordDocumentUri(name: string): vscode.Uri {
  return vscode.Uri.from({ scheme: RECORD_SCHEME, path: name });
}

export class RecordDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly engine: Engine) {}

  /** Reload the open document of a record that changed (every open one when unnamed). */
  recordChanged(name?: string): void {
    const open = vscode.workspace.textDocuments
      .map((document) => document.uri)
      .filter((uri) => uri.scheme === RECORD_SCHEME);
    for (const uri of open) {
      if (name === undefined || nameOfPath(uri.path) === name) {
        this.changed.fire(uri);
      }
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const name = nameOfPath(uri.path);
    try {
      return await this.engine.recordText(name);
    } catch (error) {
      return `# ${name}\n\n_This record could not be read: ${describeError(error)}_\n`;
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}
