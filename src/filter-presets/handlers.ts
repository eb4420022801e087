import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { toFilterPresetBody } from "./presenter.js";
import { createFilterPreset, deleteFilterPreset, listFilterPresets } from "./service.js";

/** `GET/POST /filter-presets` and `DELETE /filter-presets/{id}`. */
export function filterPresetHandlers({
  db,
}: {
  db: Db;
}): Handlers<"listFilterPresets" | "createFilterPreset" | "deleteFilterPreset"> {
  return {
    async listFilterPresets({ caller }) {
      const presets = await listFilterPresets(db, caller.accountId);
      return { status: 200, body: { data: presets.map(toFilterPresetBody) } };
    },
    async createFilterPreset({ caller, body }) {
      const preset = await createFilterPreset(db, caller.accountId, body);
      return { status: 201, body: { data: toFilterPresetBody(preset) } };
    },
    async deleteFilterPreset({ caller, params }) {
      await deleteFilterPreset(db, caller.accountId, params.id);
      return { status: 200, body: { data: { message: "Filter preset deleted." } } };
    },
  };
}
