import { describe, expect, it } from "vitest";
import { CrmApiError } from "../src/integrations/crm/errors.js";
import {
  parsedBody,
  refusedRecordIssues,
  unlistedFieldWarnings,
} from "../src/integrations/crm/mapping-issues.js";

// The issues a field-mapping test reports, shared by the CRM adapters (src/integrations/crm/).

const entries = [
  { smbFieldId: "companyName", targetField: "name" },
  { smbFieldId: "category", targetField: "industry" },
];

describe("mapping test issues", () => {
  it("warns about each mapped field the CRM no longer lists as writable", () => {
    const fields = [{ name: "name", label: "Name", type: "string", required: false }];
    expect(unlistedFieldWarnings(entries, fields)).toEqual([
      {
        smbFieldId: "category",
        targetField: "industry",
        message: "The CRM no longer lists this field as writable.",
        severity: "warning",
      },
    ]);
    expect(unlistedFieldWarnings(entries, [...fields, { ...fields[0]!, name: "industry" }])).toEqual([]);
  });

  it("a refused record: one error per field the CRM named, with its message or the error's", () => {
    const err = new CrmApiError(400, "HTTP 400", "ignored here");
    expect(
      refusedRecordIssues(err, entries, [{ field: "industry", message: "bad value" }, { field: "unmapped" }]),
    ).toEqual([
      { smbFieldId: "category", targetField: "industry", message: "bad value", severity: "error" },
      { smbFieldId: null, targetField: "unmapped", message: "HTTP 400", severity: "error" },
    ]);
  });

  it("a refused record whose answer names no field: one error for the record", () => {
    expect(refusedRecordIssues(new CrmApiError(422, "Unprocessable"), entries, [])).toEqual([
      { smbFieldId: null, targetField: null, message: "Unprocessable", severity: "error" },
    ]);
  });

  it("reads an answer body as JSON, or the fallback when it is not JSON or absent", () => {
    expect(parsedBody(new CrmApiError(400, "x", '{"errors":[]}'), null)).toEqual({ errors: [] });
    expect(parsedBody(new CrmApiError(400, "x", "<html>"), [])).toEqual([]);
    expect(parsedBody(new CrmApiError(400, "x"), {})).toEqual({});
  });
});
