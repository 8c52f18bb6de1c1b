// The "Lazy Memory" view: the live records grouped by type.

import * as vscode from "vscode";

import { Engine } from "./client";
import { describeError } from "./errors";
import { RecordSummary } from "./protocol";
import { RecordGroup, groupByType } from "./records";

export const RECORD_CONTEXT = "lazyMemory.record";

export type Node =
  | { kind: "group"; group: RecordGroup }
  | { kind: "record"; record: RecordSummary }
  | { kind: "problem"; message: string }
  | { kind: "unavailable"; marker: string };

const TYPE_ICONS: Record<string, string> = {
  user: "account",
  feedback: "comment-discussion",
  project: "project",
  reference: "references",
};

/** Asks the engine for the records each time the view is shown or refreshed. */
export class RecordTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  private pending: NodeJS.Timeout | undefined;
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly engine: Engine) {}

  /** Show the records again; bursts of changes (an import) become one request. */
  refresh(): void {
    if (this.pending) {
      clearTimeout(this.pending);
    }
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.changed.fire(undefined);
    }, 150);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node?.kind === "group") {
      return node.group.records.map((record) => ({ kind: "record", record }));
    }
    if (node) {
      return [];
    }
    try {
      const index = await this.engine.recordIndex();
      if (index.unavailable !== undefined) {
        return [{ kind: "unavailable", marker: index.unavailable }];
      }
      return groupByType(index.records).map((group) => ({ kind: "group", group }));
    } catch (error) {
      return [{ kind: "problem", message: describeError(error) }];
    }
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case "group": {
        const item = new vscode.TreeItem(node.group.type, vscode.TreeItemCollapsibleState.Expanded);
        item.description = String(node.group.records.length);
        item.iconPath = new vscode.ThemeIcon(TYPE_ICONS[node.group.type] ?? "symbol-misc");
        item.id = `type:${node.group.type}`;
        return item;
      }
      case "record": {
        const { record } = node;
        const item = new vscode.TreeItem(record.name, vscode.TreeItemCollapsibleState.None);
        item.description = record.description;
        item.tooltip = new vscode.MarkdownString().appendText(
          `${record.name} (${record.type}, revision ${record.revision})\n\n${record.description}`,
        );
        item.contextValue = RECORD_CONTEXT;
        item.id = `record:${record.name}`;
        item.command = {
          command: "lazyMemory.showRecord",
          title: "Show Record",
          arguments: [record.name],
        };
        return item;
      }
      case "unavailable": {
        // The marker's first line is the label; all of it, the retry advice too, the tooltip.
        const [headline] = node.marker.split("\n");
        const item = new vscode.TreeItem(headline, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon("warning");
        item.tooltip = node.marker;
        return item;
      }
      case "problem": {
        const item = new vscode.TreeItem(node.message, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon("error");
        item.tooltip = node.message;
        return item;
      }
    }
  }

  dispose(): void {
    if (this.pending) {
      clearTimeout(this.pending);
    }
    this.changed.dispose();
  }
}
