type Child = Node | string | null | undefined | false;

/**
 * Builds an element. Text is always set as text (never parsed as HTML), so data from the API,
 * written by third parties, cannot inject markup or script: there is no `innerHTML` anywhere.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false) continue;
    node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** Replaces the page's content. */
export function show(...children: Child[]): void {
  const main = document.getElementById("main");
  if (!main) return;
  main.replaceChildren();
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    main.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** A region that announces messages (errors of the API as readable text). */
export function messageBox(): { node: HTMLElement; say: (text: string, kind?: "error" | "info") => void } {
  const node = el("p", { class: "message", role: "status", "aria-live": "polite" });
  return {
    node,
    say(text, kind = "info") {
      node.textContent = text;
      node.className = `message ${kind}`;
      node.setAttribute("role", kind === "error" ? "alert" : "status");
    },
  };
}
