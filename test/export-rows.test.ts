import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { sql } from "kysely";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buffer, text } from "node:stream/consumers";
import { afterAll, describe, expect, it } from "vitest";
import { createDatabase, csvCopy } from "../src/db/database.js";
import { xlsxCellText } from "../src/export-files/cells.js";
import { columnsOf, type Column } from "../src/export-files/columns.js";
import { exportRowOf } from "./helpers/export-rows.js";
import { CsvLines, csvLinesFromCopy } from "../src/export-files/csv-lines.js";
import { defaultFileFormat, type FileFormat } from "../src/export-files/format.js";
import { writeExportFiles } from "../src/export-files/store.js";
import { createFileWriter } from "../src/export-files/create-file-writer.js";
import type { RowBatch } from "../src/export-files/writer.js";
import { findCsvLines, findExportRows, streamExportBatches } from "../src/exports/job/repository.js";
import { LEAD_FIELDS } from "../src/leads/fields.js";
import { toLead } from "../src/leads/presenter.js";
import { findLeadsByIds } from "../src/leads/repository.js";
import { LocalDiskStorage } from "../src/storage/local-disk.js";
import { useTestApp } from "./helpers/app.js";
import { buildLead, type LeadInput } from "./helpers/leads-factories.js";

const t = useTestApp();
const root = mkdtempSync(join(tmpdir(), "export-rows-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A format with one column per lead field (every field the catalogue has), as CSV. */
function everyFieldFormat(fileType: FileFormat["fileType"] = "csv"): FileFormat {
  return {
    ...defaultFileFormat(fileType),
    fieldMappings: LEAD_FIELDS.map((field) => ({
      sourceField: field.name,
      exportName: field.name,
      type: "field" as const,
    })),
  };
}

const LONG = 40_000;

/** Leads whose values exercise every rule of the cells: formulas, quoting, caps, types, nulls. */
const TRICKY: LeadInput[] = [
  { company_name: '=HYPERLINK("http://evil")', phone: "+1 512 555 0100", description: "a, b" },
  { company_name: 'Quote "and", comma', street: "Line one\nline two", city: "\tTabbed" },
  { company_name: "\rCR first", zip: "-0123", category: "@mention", email: "" },
  { company_name: "  spaced  ", description: "Ünïcødé 😀 text", legal_name: "back\\slash" },
  { company_name: "x".repeat(LONG), description: "=" + "y".repeat(LONG) },
  { company_name: "z".repeat(32_766) + "😀tail", description: '"'.repeat(20_000) },
  { company_name: "é".repeat(20_000), description: "-" + ",".repeat(33_000) },
  { company_name: null, registered_url: null, crawled_url: "https://crawled.example.com/" },
  { stars: -1.5, review_count: -5, employees: null, is_chain: true, phone_secondary: "" },
  { is_chain: false, founded_date: "2019-03-01", number_of_locations: 3, naics_code: "=238220" },
  {
    ai_category_estimation: ["=Plumbing", "Home, services"],
    buying_signal_type: ["new_website", "+social"],
    founders: [],
    website_schema_types: ["LocalBusiness"],
    web_technologies: ["WordPress", "PHP"],
    social_profiles: JSON.stringify({ facebook: "https://facebook.com/acme", x: "=y" }),
  },
  { ai_category_estimation: null, last_buying_signal: null, last_updated: null },
  {
    registration_date: "2004-02-29",
    redirect: true,
    time_scraped: new Date("2026-10-31T23:59:59.001Z"),
    address_full: "1 Main St,\nAustin, TX",
    address_source: "schema_org",
    email_primary_mx: "google.com",
    email_domain_mx: "secureserver.net",
    email_security: ["spf", "dkim"],
    founder_emails: ["ann@example.com", "=bo@example.com"],
    founder_phones: ["+1 512 555 0101"],
    latitude: -33.123456789,
    longitude: 0.1 + 0.2,
    area_served: '"Greater" Austin',
    offers: "-10% today",
    slogan: "@home",
    logo_url: "https://example.com/logo.png",
    platform: "WordPress",
    ad_pixels: "Meta Pixel, Google Ads",
    open_positions: 0,
    rating_value: 4.75,
    duns: "012345678",
  },
  { redirect: false, email_security: [], founder_emails: [], latitude: 90, open_positions: null },
];

async function buildTrickyLeads(): Promise<number[]> {
  const ids: number[] = [];
  for (const overrides of TRICKY) ids.push(await buildLead(t.ctx.db, overrides));
  return ids;
}

/** Writes batches with a writer of the format and collects the file. */
async function render(format: FileFormat, batches: RowBatch[]): Promise<Buffer> {
  const writer = createFileWriter(format.fileType, {
    columns: columnsOf(format),
    includeHeaders: format.includeHeaders,
    startRow: format.startRow,
  });
  const body = buffer(writer.output);
  for (const batch of batches) await writer.write(batch);
  await writer.end();
  return body;
}

describe("export rows read from the database", () => {
  it("hold every field as the API's Lead has it, in the text and the JSON encoding", async () => {
    const ids = await buildTrickyLeads();
    const columns = columnsOf(everyFieldFormat());
    const leads = (await findLeadsByIds(t.ctx.db, ids)).map((lead) => toLead(lead));
    const byId = new Map(leads.map((lead) => [lead.id, lead]));
    for (const encoding of ["text", "json"] as const) {
      const rows = await findExportRows(t.ctx.db, ids, columns, encoding);
      expect(rows).toHaveLength(ids.length);
      rows.forEach((row, i) => {
        const expected = exportRowOf(byId.get(ids[i]!)!, columns, encoding);
        columns.forEach((column, c) => {
          const [got, want] = [row[c] ?? null, expected[c] ?? null];
          const name = `${column.header} (${encoding}) of lead ${i}`;
          // Objects are JSON in both encodings; PostgreSQL orders and spaces their keys its own way.
          if (column.field?.type === "object" || encoding === "json") {
            expect(got === null ? null : JSON.parse(got), name).toEqual(
              want === null ? null : JSON.parse(want),
            );
          } else {
            // An empty text and a missing value are both an empty cell.
            expect(got ?? "", name).toBe(want ?? "");
          }
        });
      });
    }
  });

  it("write timestamps in UTC whatever the time zone of the database session", async () => {
    const ids = await buildTrickyLeads();
    const url = new URL(t.database.url);
    url.searchParams.set("options", "-c timezone=America/Chicago");
    const { db } = createDatabase(url.toString(), 2);
    try {
      const format: FileFormat = {
        ...defaultFileFormat(),
        fieldMappings: [{ sourceField: "lastUpdated", exportName: "Updated", type: "field" }],
      };
      const columns = columnsOf(format);
      const expected = (await findLeadsByIds(t.ctx.db, ids)).map((lead) => toLead(lead).lastUpdated);
      const rows = await findExportRows(db, ids, columns, "text");
      expect(rows.map((row) => row[0])).toEqual(expected);
      const lines = parse((await findCsvLines(db, ids, columns)).bytes) as string[][];
      expect(lines.map((line) => line[0] || null)).toEqual(expected);
    } finally {
      await db.destroy();
    }
  });

  it("keeps the order of the ids and fails when a lead was deleted meanwhile", async () => {
    const ids = await buildTrickyLeads();
    const reversed = [...ids].reverse();
    const columns = columnsOf(defaultFileFormat());
    const rows = await findExportRows(t.ctx.db, reversed, columns, "text");
    expect(rows.map((row) => Number(row[0]))).toEqual(reversed);
    const lines = await findCsvLines(t.ctx.db, reversed, columns);
    const parsed = parse(lines.bytes, { relax_column_count: false }) as string[][];
    expect(parsed.map((row) => Number(row[0]))).toEqual(reversed);

    await t.ctx.db.deleteFrom("leads").where("id", "=", ids[3]!).execute();
    await expect(findExportRows(t.ctx.db, ids, columns, "text")).rejects.toThrow(/deleted/);
    await expect(findCsvLines(t.ctx.db, ids, columns)).rejects.toThrow(/deleted/);
  });
});

describe("CSV lines rendered by the database (COPY)", () => {
  it("are byte for byte what the CSV writer makes of the same rows", async () => {
    const ids = await buildTrickyLeads();
    const formats = [
      everyFieldFormat(),
      defaultFileFormat(),
      {
        ...defaultFileFormat(),
        startRow: 3,
        fieldMappings: [
          { sourceField: "wCompanyName", exportName: "=Company", type: "field" as const },
          { sourceField: "", exportName: "Notes", type: "spacer" as const },
          { sourceField: "stars", exportName: "Stars", type: "field" as const },
          { sourceField: "isChain", exportName: "Chain", type: "field" as const },
        ],
      },
    ];
    for (const format of formats) {
      const columns = columnsOf(format);
      const fromRows = await render(format, [await findExportRows(t.ctx.db, ids, columns, "text")]);
      const fromCopy = await render(format, [await findCsvLines(t.ctx.db, ids, columns)]);
      expect(fromCopy.equals(fromRows)).toBe(true);
      const parsed = parse(fromCopy, { relax_column_count: false }) as string[][];
      expect(parsed).toHaveLength(ids.length + format.startRow);
    }
  });

  it("neutralise, cap and keep what the cells hold, read back by csv-parse", async () => {
    const ids = await buildTrickyLeads();
    const format: FileFormat = {
      ...defaultFileFormat(),
      includeHeaders: false,
      fieldMappings: [
        { sourceField: "companyName", exportName: "Company", type: "field" },
        { sourceField: "description", exportName: "Description", type: "field" },
        { sourceField: "reviewCount", exportName: "Reviews", type: "field" },
      ],
    };
    const lines = await findCsvLines(t.ctx.db, ids, columnsOf(format));
    const rows = parse(lines.bytes) as string[][];
    expect(rows[0]!.slice(0, 2)).toEqual(['\'=HYPERLINK("http://evil")', "a, b"]);
    expect(rows[1]![0]).toBe('Quote "and", comma');
    expect(rows[2]![0]).toBe("'\rCR first");
    expect(rows[4]![0]).toHaveLength(32_767);
    expect(rows[4]![1]).toBe("'=" + "y".repeat(32_765));
    // The cut never splits the emoji: the cell stops before it.
    expect(rows[5]![0]).toBe("z".repeat(32_766));
    expect(rows[5]![1]).toBe('"'.repeat(20_000));
    expect(rows[6]![0]).toBe("é".repeat(20_000));
    expect(rows[6]![1]).toBe("'-" + ",".repeat(32_765));
    // Numbers are never neutralised (-5 is a number, not a formula).
    expect(rows[8]![2]).toBe("-5");
    expect(lines.bytes.includes("\r\n")).toBe(true);
  });

  it("write a lone \\. of a one-column file as the writer does", async () => {
    const ids = [await buildLead(t.ctx.db, { company_name: "\\." }), await buildLead(t.ctx.db)];
    const format: FileFormat = {
      ...defaultFileFormat(),
      fieldMappings: [{ sourceField: "companyName", exportName: "Company", type: "field" }],
    };
    const columns = columnsOf(format);
    const fromRows = await render(format, [await findExportRows(t.ctx.db, ids, columns, "text")]);
    const fromCopy = await render(format, [await findCsvLines(t.ctx.db, ids, columns)]);
    expect(fromCopy.toString()).toBe(fromRows.toString());
    expect(fromCopy.toString().split("\r\n")[1]).toBe("\\.");
  });

  it("split into parts and _total like rows do, whatever the batches", async () => {
    const ids = await buildTrickyLeads();
    const format: FileFormat = {
      ...defaultFileFormat(),
      splitFiles: true,
      splitMode: "equal_parts",
      numberOfParts: 5,
      includeTotal: true,
    };
    const columns = columnsOf(format);
    const storage = new LocalDiskStorage(root);
    const filesOf = async (rows: RowBatch[]) => {
      const written = await writeExportFiles(storage, { accountId: 1, rows, totalCount: ids.length, format });
      return Promise.all(written.files.map(async (file) => text((await storage.get(file.storageKey))!)));
    };
    // Batches of 5 lines straddle the parts (3, 3, 3, 3, 2 leads).
    const lines = await findCsvLines(t.ctx.db, ids, columns);
    const copied = await filesOf([lines.slice(0, 5), lines.slice(5, 10), lines.slice(10, 14)]);
    const rowFiles = await filesOf([await findExportRows(t.ctx.db, ids, columns, "text")]);
    expect(copied).toHaveLength(6);
    expect(copied).toEqual(rowFiles);
  });

  it("stream as CSV lines for CSV files and as rows for the other types", async () => {
    const ids = await buildTrickyLeads();
    const columns = columnsOf(defaultFileFormat());
    const kinds = async (fileType: FileFormat["fileType"]) => {
      const seen: boolean[] = [];
      for await (const batch of streamExportBatches(t.ctx.db, ids, columns, fileType)) {
        seen.push(batch instanceof CsvLines);
      }
      return seen;
    };
    expect(await kinds("csv")).toEqual([true]);
    expect(await kinds("json")).toEqual([false]);
    expect(await kinds("xlsx")).toEqual([false]);
  });

  it("come in the ids' order over several batches read ahead, and fail at a deleted lead's batch", async () => {
    const ids = (await buildTrickyLeads()).reverse();
    const columns = columnsOf(defaultFileFormat());
    const idsOf = (batch: RowBatch) =>
      batch instanceof CsvLines
        ? (parse(batch.bytes) as string[][]).map((row) => Number(row[0]))
        : batch.map((row) => Number(row[0]));
    for (const fileType of ["csv", "json", "xlsx"] as const) {
      const batches: number[][] = [];
      for await (const batch of streamExportBatches(t.ctx.db, ids, columns, fileType, 3)) {
        batches.push(idsOf(batch));
      }
      expect(batches.map((b) => b.length)).toEqual([3, 3, 3, 3, ids.length - 12]);
      expect(batches.flat()).toEqual(ids);
    }

    // The fourth batch's lead is gone: the three before it are given, then the export fails.
    await t.ctx.db.deleteFrom("leads").where("id", "=", ids[10]!).execute();
    for (const fileType of ["csv", "json"] as const) {
      const given: number[][] = [];
      const reading = (async () => {
        for await (const batch of streamExportBatches(t.ctx.db, ids, columns, fileType, 3)) {
          given.push(idsOf(batch));
        }
      })();
      await expect(reading).rejects.toThrow(/deleted/);
      expect(given).toEqual([ids.slice(0, 3), ids.slice(3, 6), ids.slice(6, 9)]);
    }
  });
});

describe("XLSX files of rows read from the database", () => {
  it("hold every cell neutralised, capped and typed as the rows have it, read back by exceljs", async () => {
    const ids = await buildTrickyLeads();
    const format = everyFieldFormat("xlsx");
    const columns = columnsOf(format);
    const rows = await findExportRows(t.ctx.db, ids, columns, "text");
    // In two batches, as the export feeds a writer.
    const file = await render(format, [rows.slice(0, 5), rows.slice(5)]);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(file as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(ids.length + 1);
    columns.forEach((column, c) => expect(sheet.getRow(1).getCell(c + 1).value).toBe(column.header));
    rows.forEach((row, i) => {
      columns.forEach((column, c) => {
        const value = row[c] ?? "";
        const expected =
          value === ""
            ? null
            : column.kind === "number"
              ? Number(value)
              : column.kind === "boolean"
                ? value === "true"
                : xlsxCellText(value);
        const got = sheet.getRow(i + 2).getCell(c + 1).value;
        // Text with CR or white space at either end is an inline rich-text cell.
        const plain =
          got && typeof got === "object" && "richText" in got
            ? got.richText.map((r) => r.text).join("")
            : got;
        expect(plain ?? null, `${column.header} of lead ${i}`).toEqual(expected);
      });
    });
    // Spot checks of the rules the comparison above relies on.
    const companyName = columns.findIndex((column) => column.header === "companyName") + 1;
    expect(sheet.getRow(2).getCell(companyName).value).toBe('\'=HYPERLINK("http://evil")');
    expect(String(sheet.getRow(6).getCell(companyName).value)).toHaveLength(32_767);
    expect(sheet.getRow(7).getCell(companyName).value).toBe("z".repeat(32_766));
  });
});

describe("csvLinesFromCopy", () => {
  const columns = (kinds: Column["kind"][]): Column[] =>
    kinds.map((kind, i) => ({ header: `c${i}`, field: null, kind }));

  it("ends lines with CRLF, neutralises text cells only and slices by line", () => {
    const lines = csvLinesFromCopy(
      Buffer.from('=a,-1,"@b,c"\n"x\ny",2,\n'),
      columns(["text", "number", "text"]),
    );
    expect(lines.bytes.toString()).toBe('\'=a,-1,"\'@b,c"\r\n"x\ny",2,\r\n');
    expect(lines).toHaveLength(2);
    expect(lines.slice(1, 2).bytes.toString()).toBe('"x\ny",2,\r\n');
    expect(lines.slice(0, 1).bytes.toString()).toBe("'=a,-1,\"'@b,c\"\r\n");
    expect(lines.slice(1, 1)).toHaveLength(0);
  });

  it("refuses output that does not match the columns", () => {
    expect(() => csvLinesFromCopy(Buffer.from("a,b\n"), columns(["text"]))).toThrow(/fields/);
    expect(() => csvLinesFromCopy(Buffer.from('"a\n'), columns(["text"]))).toThrow(/quoted/);
    expect(() => csvLinesFromCopy(Buffer.from("a"), columns(["text"]))).toThrow(/line feed/);
  });

  it("is fed by a COPY that takes no bind parameters", async () => {
    await expect(csvCopy(sql`select ${1}::int`).execute(t.ctx.db)).rejects.toThrow(/no parameters/);
    const { rows } = await csvCopy(sql`select ${sql.lit("a,b")}::text, 1`).execute(t.ctx.db);
    expect(rows[0]![0].toString()).toBe('"a,b",1\n');
  });
});
