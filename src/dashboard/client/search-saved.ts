import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el, type messageBox } from "./dom.js";
import type { FilterForm } from "./search-filters.js";

type Preset = components["schemas"]["FilterPreset"];
type KeywordList = components["schemas"]["KeywordList"];

/**
 * The saved parts of a search: filter presets (list, apply to the form, save the form's filters)
 * and keyword lists (list, add their keywords to the form's keywords); both can be deleted, after
 * the browser's confirmation.
 */
export function savedSearches(
  form: FilterForm,
  box: ReturnType<typeof messageBox>,
): { node: HTMLElement; load: () => Promise<void> } {
  let presets: Preset[] = [];
  let lists: KeywordList[] = [];
  const presetSelect = el("select", { id: "preset" });
  const applyPreset = el("button", { type: "button", id: "apply-preset" }, "Apply preset");
  const presetName = el("input", { id: "preset-name", maxlength: "255", autocomplete: "off" });
  const savePreset = el("button", { type: "button", id: "save-preset" }, "Save filters as preset");
  const listSelect = el("select", { id: "keyword-list" });
  const applyList = el("button", { type: "button", id: "apply-keyword-list" }, "Add to keywords");
  const deletePreset = el("button", { type: "button", id: "delete-preset" }, "Delete preset");
  const deleteList = el("button", { type: "button", id: "delete-keyword-list" }, "Delete list");

  const node = el(
    "section",
    { id: "saved-searches", class: "actions", "aria-label": "Presets and keyword lists" },
    el(
      "div",
      { class: "group" },
      el("h2", {}, "Presets"),
      el("label", { for: "preset" }, "Saved preset"),
      presetSelect,
      applyPreset,
      deletePreset,
      el("label", { for: "preset-name" }, "Name of a new preset"),
      presetName,
      savePreset,
    ),
    el(
      "div",
      { class: "group" },
      el("h2", {}, "Keyword lists"),
      el("label", { for: "keyword-list" }, "Keyword list"),
      listSelect,
      applyList,
      deleteList,
    ),
  );

  function fillPresets(): void {
    presetSelect.replaceChildren(
      ...(presets.length === 0 ? [el("option", { value: "" }, "No presets yet")] : []),
      ...presets.map((p) => el("option", { value: String(p.id) }, p.name)),
    );
  }

  function fillLists(): void {
    listSelect.replaceChildren(
      ...(lists.length === 0 ? [el("option", { value: "" }, "No keyword lists yet")] : []),
      ...lists.map((l) =>
        el("option", { value: String(l.id) }, `${l.name} (${l.type}, ${l.keywords.length} keywords)`),
      ),
    );
  }

  async function loadPresets(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/filter-presets");
    if (!data) return box.say(messageOf(error, response), "error");
    presets = data.data;
    fillPresets();
  }

  async function loadLists(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/keyword-lists");
    if (!data) return box.say(messageOf(error, response), "error");
    lists = data.data;
    fillLists();
  }

  applyPreset.addEventListener("click", () => {
    const preset = presets.find((p) => String(p.id) === presetSelect.value);
    if (!preset) return box.say("Choose a preset first.", "error");
    const skipped = form.apply(preset.filters);
    box.say(
      `Preset "${preset.name}" applied.` +
        (skipped.length > 0 ? ` Not shown by this form, so not applied: ${skipped.join(", ")}.` : ""),
    );
  });

  savePreset.addEventListener("click", () => {
    void (async () => {
      const name = presetName.value.trim();
      if (name === "") return box.say("Give the preset a name.", "error");
      const { data, error, response } = await api.POST("/api/v1/filter-presets", {
        body: { name, filters: form.read() },
      });
      if (!data) return box.say(messageOf(error, response), "error");
      presetName.value = "";
      box.say(`Preset "${data.data.name}" saved.`);
      await loadPresets();
      presetSelect.value = String(data.data.id);
    })();
  });

  applyList.addEventListener("click", () => {
    const list = lists.find((l) => String(l.id) === listSelect.value);
    if (!list) return box.say("Choose a keyword list first.", "error");
    form.addKeywords(list.type === "negative" ? "negative" : "positive", list.keywords);
    box.say(
      `Keyword list "${list.name}" added to the ${list.type === "negative" ? "excluded " : ""}keywords.`,
    );
  });

  deletePreset.addEventListener("click", () => {
    void (async () => {
      const preset = presets.find((p) => String(p.id) === presetSelect.value);
      if (!preset) return box.say("Choose a preset first.", "error");
      if (!window.confirm(`Delete the preset "${preset.name}"?`)) return;
      deletePreset.disabled = true;
      try {
        const { data, error, response } = await api.DELETE("/api/v1/filter-presets/{id}", {
          params: { path: { id: preset.id } },
        });
        if (!data) return box.say(messageOf(error, response), "error");
        box.say(`Preset "${preset.name}" deleted.`);
        await loadPresets();
      } finally {
        deletePreset.disabled = false;
      }
    })();
  });

  deleteList.addEventListener("click", () => {
    void (async () => {
      const list = lists.find((l) => String(l.id) === listSelect.value);
      if (!list) return box.say("Choose a keyword list first.", "error");
      if (!window.confirm(`Delete the keyword list "${list.name}"?`)) return;
      deleteList.disabled = true;
      try {
        const { data, error, response } = await api.DELETE("/api/v1/keyword-lists/{id}", {
          params: { path: { id: list.id } },
        });
        if (!data) return box.say(messageOf(error, response), "error");
        box.say(`Keyword list "${list.name}" deleted.`);
        await loadLists();
      } finally {
        deleteList.disabled = false;
      }
    })();
  });

  return {
    node,
    load: async () => {
      await Promise.all([loadPresets(), loadLists()]);
    },
  };
}
