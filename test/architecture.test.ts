import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// The layering of ARCHITECTURE.md, checked on the import statements of src/: no module imports
// itself back through others, and no two folders of src/ depend on each other in a circle (the
// composition roots, src/app/ and src/worker/, sit above the areas they assemble).

const SRC = resolve("src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Relative imports and re-exports of each file (type-only ones included: they are dependencies too). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)].map((m) =>
      resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts")),
    );
    const sideEffects = [...text.matchAll(/^import\s+"(\.{1,2}\/[^"]+)"/gm)].map((m) =>
      resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts")),
    );
    graph.set(file, [...targets, ...sideEffects]);
  }
  return graph;
}

/** The strongly connected components with more than one node (Tarjan): each one is a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indexOf.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexOf.has(node)) visit(node);
  return found;
}

/** The folder of a file under src/ (a file directly in src/, such as main.ts, is its own node). */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split("/");
  return parts.length === 1 ? parts[0]! : `${parts[0]}/`;
}

describe("architecture", () => {
  const graph = importGraph();

  it("has no import cycles between modules", () => {
    const found = cycles(graph).map((cycle) => cycle.map((file) => relative(SRC, file)).join(" -> "));
    expect(found).toEqual([]);
  });

  it("has no import cycles between folders of src/", () => {
    const folders = new Map<string, Set<string>>();
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      const edges = folders.get(from) ?? new Set<string>();
      for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target));
      folders.set(from, edges);
    }
    const asGraph = new Map([...folders].map(([folder, edges]) => [folder, [...edges]]));
    expect(cycles(asGraph).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("keeps the HTTP contract layer free of the areas it serves", () => {
    const http = [...graph].filter(([file]) => folderOf(file) === "http/");
    const outside = http.flatMap(([file, targets]) =>
      targets
        .filter((t) => t.startsWith(`${SRC}/`) && !t.startsWith(join(SRC, "http")))
        .map((t) => `${relative(SRC, file)} -> ${relative(SRC, t)}`),
    );
    expect(outside).toEqual([]);
  });
});
