import { XLSX_MAX_ROWS, exportTooLarge } from "../export-files/errors.js";
import type { ErrorDetail } from "../http/errors.js";
import { errors } from "../http/errors.js";
import { resolveLeadField } from "../leads/fields.js";
import type { ExportFormatFields } from "./format.js";

const MODE_NEEDS: Record<string, { maxRowsPerFile: boolean; numberOfParts: boolean }> = {
  max_rows: { maxRowsPerFile: true, numberOfParts: false },
  equal_parts: { maxRowsPerFile: false, numberOfParts: true },
  parts_max_rows: { maxRowsPerFile: true, numberOfParts: true },
};

/**
 * Checks a complete set of format fields (a create, or an update merged with the stored format)
 * and returns them normalised: names trimmed, spacers' `sourceField` "", values the split mode does
 * not use null. Throws 400 `validation_error` (every problem in `details`), then 400
 * `export_too_large` for an XLSX format with `maxRowsPerFile` above 20,000.
 */
export function checkFormatFields(fields: ExportFormatFields): ExportFormatFields {
  const problems: ErrorDetail[] = [];
  const name = fields.name.trim();
  if (name.length === 0) problems.push({ path: ["body", "name"], message: "must not be blank" });

  const fieldMappings = fields.fieldMappings.map((mapping, i) => {
    if (mapping.type === "spacer")
      return { sourceField: "", exportName: mapping.exportName, type: mapping.type };
    const sourceField = mapping.sourceField.trim();
    if (!resolveLeadField(sourceField)) {
      problems.push({
        path: ["body", "fieldMappings", String(i), "sourceField"],
        message: sourceField ? `unknown lead field "${sourceField}"` : "a field column needs a sourceField",
      });
    }
    return { sourceField, exportName: mapping.exportName, type: mapping.type };
  });

  let { splitMode, maxRowsPerFile, numberOfParts } = fields;
  if (!fields.splitFiles) {
    splitMode = null;
    maxRowsPerFile = null;
    numberOfParts = null;
  } else if (splitMode === null) {
    problems.push({ path: ["body", "splitMode"], message: "is required when splitFiles is true" });
  } else {
    const needs = MODE_NEEDS[splitMode]!;
    if (needs.maxRowsPerFile && maxRowsPerFile === null) {
      problems.push({ path: ["body", "maxRowsPerFile"], message: `is required by splitMode ${splitMode}` });
    }
    if (needs.numberOfParts && numberOfParts === null) {
      problems.push({ path: ["body", "numberOfParts"], message: `is required by splitMode ${splitMode}` });
    }
    if (!needs.maxRowsPerFile) maxRowsPerFile = null;
    if (!needs.numberOfParts) numberOfParts = null;
  }
  if (problems.length > 0) {
    throw errors.validation(
      `Invalid export format: ${problems.map((p) => `${p.path.slice(1).join(".")} ${p.message}`).join("; ")}.`,
      problems,
    );
  }

  if (fields.fileType === "xlsx" && maxRowsPerFile !== null && maxRowsPerFile > XLSX_MAX_ROWS) {
    throw exportTooLarge(maxRowsPerFile);
  }
  return { ...fields, name, fieldMappings, splitMode, maxRowsPerFile, numberOfParts };
}
