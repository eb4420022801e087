import type { CrmMappingTestScope } from "./adapter.js";
import type { CrmApiError } from "./errors.js";
import type { CrmField, CrmFieldMappingEntry } from "./mapping.js";

type Issues = CrmMappingTestScope["issues"];

/** A mapping test's warning for each mapped target field the CRM no longer lists as writable. */
export function unlistedFieldWarnings(
  entries: readonly CrmFieldMappingEntry[],
  fields: readonly CrmField[],
): Issues {
  const names = new Set(fields.map((f) => f.name));
  return entries
    .filter((m) => !names.has(m.targetField))
    .map((m) => ({
      smbFieldId: m.smbFieldId,
      targetField: m.targetField,
      message: "The CRM no longer lists this field as writable.",
      severity: "warning" as const,
    }));
}

/**
 * The problems of a synthetic record the CRM refused: one per field it named (`named`, read from
 * its answer by the adapter, with its message when it gave one), else one for the record.
 */
export function refusedRecordIssues(
  err: CrmApiError,
  entries: readonly CrmFieldMappingEntry[],
  named: readonly { field: string; message?: string }[],
): Issues {
  if (named.length === 0) {
    return [{ smbFieldId: null, targetField: null, message: err.message, severity: "error" }];
  }
  return named.map(({ field, message }) => ({
    smbFieldId: entries.find((m) => m.targetField === field)?.smbFieldId ?? null,
    targetField: field,
    message: message ?? err.message,
    severity: "error" as const,
  }));
}

/** An answer body as JSON, or `fallback` when it is not JSON. */
export function parsedBody(err: CrmApiError, fallback: unknown): unknown {
  try {
    return JSON.parse(err.responseBody ?? "");
  } catch {
    return fallback;
  }
}
