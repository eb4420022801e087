import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { PassThrough, Readable } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import { afterAll, describe, expect, it } from "vitest";
import { ApiError } from "../src/http/errors.js";
import { LEAD_FIELDS } from "../src/leads/fields.js";
import type { ApiLead } from "../src/leads/presenter.js";
import { MAX_CELL_CHARS, safeCellText, xlsxCellText } from "../src/export-files/cells.js";
import { plainText } from "./helpers/export-rows.js";
import { columnsOf } from "../src/export-files/columns.js";
import { DEFAULT_COLUMNS, defaultFileFormat, type FileFormat } from "../src/export-files/format.js";
import {
  assertExportFits,
  exportBaseName,
  formatLeadCapacity,
  planExport,
} from "../src/export-files/split.js";
import { writeExportFiles } from "../src/export-files/store.js";
import { createFileWriter } from "../src/export-files/create-file-writer.js";
import { SheetBacklog } from "../src/export-files/xlsx-backlog.js";
import {
  columnWidths,
  MAX_COLUMN_WIDTH,
  MIN_COLUMN_WIDTH,
  xlsxText,
  xlsxValue,
} from "../src/export-files/xlsx-cells.js";
import type { FileStorage } from "../src/storage/file-storage.js";
import { LocalDiskStorage } from "../src/storage/local-disk.js";
import { readZip, rowsOf, sampleLead, sampleLeads } from "./helpers/export-factories.js";

const root = mkdtempSync(join(tmpdir(), "export-files-test-"));
const storage = new LocalDiskStorage(root);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function format(overrides: Partial<FileFormat> = {}): FileFormat {
  return {
    ...defaultFileFormat(),
    name: "Test",
    fieldMappings: [
      { sourceField: "companyName", exportName: "Company", type: "field" },
      { sourceField: "", exportName: "Spacer", type: "spacer" },
      { sourceField: "wPhonePrimary", exportName: "Phone", type: "field" },
      { sourceField: "buyingSignalType", exportName: "Signals", type: "field" },
      { sourceField: "stars", exportName: "Stars", type: "field" },
    ],
    ...overrides,
  };
}

/** Writes leads with a writer and collects the file. */
async function writeFile(f: FileFormat, leads: Record<string, unknown>[]): Promise<Buffer> {
  const writer = createFileWriter(f.fileType, {
    columns: columnsOf(f),
    includeHeaders: f.includeHeaders,
    startRow: f.startRow,
  });
  const chunks: Buffer[] = [];
  const collected = new Promise<Buffer>((resolve, reject) => {
    writer.output.on("data", (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
    writer.output.on("end", () => resolve(Buffer.concat(chunks)));
    writer.output.on("error", reject);
  });
  // In two batches, so a writer is also fed more than once.
  const rows = rowsOf(leads, f)[0]!;
  const half = Math.ceil(rows.length / 2);
  await writer.write(rows.slice(0, half));
  await writer.write(rows.slice(half));
  await writer.end();
  return collected;
}

/** The one worksheet of an XLSX file, read by exceljs. */
async function loadSheet(file: Buffer): Promise<ExcelJS.Worksheet> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(file as unknown as ArrayBuffer);
  return workbook.worksheets[0]!;
}

/** A cell's text: inline rich text (what the writer uses for CR, edge spaces, `_xHHHH_`) joined. */
function cellText(value: ExcelJS.CellValue): unknown {
  if (value && typeof value === "object" && "richText" in value)
    return value.richText.map((r) => r.text).join("");
  return value;
}

/** The first five cells of every row (null when empty), text cells as their text. */
async function readXlsx(file: Buffer): Promise<unknown[][]> {
  const sheet = await loadSheet(file);
  const rows: unknown[][] = [];
  for (let r = 1; r <= sheet.rowCount; r += 1) {
    const row = sheet.getRow(r);
    const values: unknown[] = [];
    for (let c = 1; c <= 5; c += 1) values.push(cellText(row.getCell(c).value) ?? null);
    rows.push(values);
  }
  return rows;
}

/** The worksheet XML of an XLSX file (as exceljs's WorkbookWriter names it). */
function sheetXml(file: Buffer): string {
  return readZip(file).get("xl/worksheets/sheet1.xml")!.toString("utf8");
}

const parseCsv = (file: Buffer): string[][] => parse(file, { relax_column_count: false }) as string[][];

describe("cells", () => {
  it.each(["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tx", "\rx"])("neutralises %j", (value) => {
    expect(safeCellText(value)).toBe(`'${value}`);
    expect(xlsxCellText(value)).toBe(`'${value}`);
  });

  it("leaves ordinary text alone, joins lists and writes objects as JSON", () => {
    expect(safeCellText("Acme = best")).toBe("Acme = best");
    expect(plainText(["a", "b"])).toBe("a; b");
    expect(safeCellText(plainText(["=x", "b"]))).toBe("'=x; b");
    expect(plainText(null)).toBe("");
    expect(plainText(-5)).toBe("-5");
    expect(plainText(new Date("2026-11-01T10:00:00Z"))).toBe("2026-11-01T10:00:00.000Z");
    expect(plainText({ facebook: "https://f" })).toBe('{"facebook":"https://f"}');
    expect(xlsxCellText("a\u0000b")).toBe("ab");
  });

  it("caps cells at 32,767 characters, never inside a surrogate pair", () => {
    expect(safeCellText("x".repeat(40_000))).toHaveLength(MAX_CELL_CHARS);
    expect(safeCellText("=" + "x".repeat(40_000))).toHaveLength(MAX_CELL_CHARS);
    const emoji = "x".repeat(MAX_CELL_CHARS - 1) + "😀";
    const cut = safeCellText(emoji);
    expect(cut).toHaveLength(MAX_CELL_CHARS - 1);
    expect(Buffer.from(cut, "utf8").toString("utf8")).toBe(cut);
  });
});

describe("XLSX cells", () => {
  it("passes plain text through and makes the rest safe, as inline text where plain text would lose it", () => {
    expect(xlsxText("Acme Plumbing")).toBe("Acme Plumbing");
    expect(xlsxText("a\nb")).toBe("a\nb");
    expect(xlsxText("")).toBeUndefined();
    expect(xlsxText("\u0000")).toBeUndefined();
    expect(xlsxText("=1+1")).toBe("'=1+1");
    expect(xlsxText("@x")).toBe("'@x");
    expect(xlsxText("a\u0000b\uFFFF")).toBe("ab");
    expect(xlsxText("x".repeat(40_000))).toBe("x".repeat(MAX_CELL_CHARS));
    expect(xlsxText("\tx")).toBe("'\tx");
    expect(xlsxText("\rx")).toEqual({ richText: [{ text: "'_x000D_x" }] });
    expect(xlsxText(" a")).toEqual({ richText: [{ text: " a" }] });
    expect(xlsxText("a\u00a0")).toEqual({ richText: [{ text: "a\u00a0" }] });
    expect(xlsxText("a\r\nb")).toEqual({ richText: [{ text: "a_x000D_\nb" }] });
    expect(xlsxText("_x0041_ _X00ff_")).toEqual({ richText: [{ text: "_x005F_x0041_ _x005F_X00ff_" }] });
  });

  it("types numbers and booleans by column kind", () => {
    expect(xlsxValue("number", "-5")).toBe(-5);
    expect(xlsxValue("number", "4.5")).toBe(4.5);
    expect(xlsxValue("number", "x")).toBeUndefined();
    expect(xlsxValue("boolean", "true")).toBe(true);
    expect(xlsxValue("boolean", "false")).toBe(false);
    expect(xlsxValue("text", "-5")).toBe("'-5");
    expect(xlsxValue("text", null)).toBeUndefined();
    expect(xlsxValue("number", "")).toBeUndefined();
  });

  it("sizes columns by the longest of header and sample, within bounds", () => {
    expect(
      columnWidths(
        ["id", "=name", "description"],
        [
          ["1", "Acme", "d".repeat(80)],
          ["22", null, null],
        ],
      ),
    ).toEqual([MIN_COLUMN_WIDTH, MIN_COLUMN_WIDTH, MAX_COLUMN_WIDTH]);
    expect(columnWidths(["Company"], [["Acme Plumbing & Heating"]])).toEqual([
      "Acme Plumbing & Heating".length + 3,
    ]);
  });
});

describe("CSV writer", () => {
  it("writes headers, spacers, aliases, lists and neutralised cells, read back by csv-parse", async () => {
    const leads = [
      sampleLead({ companyName: '=HYPERLINK("http://evil")', phone: "+1 512 555 0100" }),
      sampleLead({
        companyName: 'Quote "and", comma',
        buyingSignalType: ["new_website", "new_social"],
        stars: null,
      }),
    ];
    const rows = parseCsv(await writeFile(format(), leads));
    expect(rows).toEqual([
      ["Company", "Spacer", "Phone", "Signals", "Stars"],
      ['\'=HYPERLINK("http://evil")', "", "'+1 512 555 0100", "new_website", "4.5"],
      ['Quote "and", comma', "", "(512) 555-0100", "new_website; new_social", ""],
    ]);
  });

  it("keeps multi-line values in one quoted cell", async () => {
    const leads = [sampleLead({ companyName: "Line one\nline two", phone: "a\rb" })];
    const rows = parseCsv(await writeFile(format(), leads));
    expect(rows).toHaveLength(2);
    expect(rows[1]!.slice(0, 3)).toEqual(["Line one\nline two", "", "a\rb"]);
  });

  it("leaves headers out and starts at startRow with blank rows above", async () => {
    const file = await writeFile(format({ includeHeaders: false, startRow: 3 }), [
      sampleLead({ companyName: "A" }),
    ]);
    expect(file.toString()).toMatch(/^,,,,\r\n,,,,\r\nA,/);
    expect(parseCsv(file)).toEqual([
      ["", "", "", "", ""],
      ["", "", "", "", ""],
      ["A", "", "(512) 555-0100", "new_website", "4.5"],
    ]);
    const withHeader = parseCsv(await writeFile(format({ startRow: 2 }), [sampleLead({ companyName: "B" })]));
    expect(withHeader.map((r) => r[0])).toEqual(["", "Company", "B"]);
  });

  it("caps a long cell at 32,767 characters", async () => {
    const rows = parseCsv(await writeFile(format(), [sampleLead({ companyName: "y".repeat(50_000) })]));
    expect(rows[1]![0]).toHaveLength(MAX_CELL_CHARS);
  });

  it("writes the default columns for the built-in format", async () => {
    const lead = sampleLead();
    const rows = parseCsv(await writeFile(defaultFileFormat(), [lead]));
    expect(rows[0]).toEqual([...DEFAULT_COLUMNS]);
    expect(rows[1]![DEFAULT_COLUMNS.indexOf("companyName")]).toBe(lead.companyName);
    expect(rows[1]![DEFAULT_COLUMNS.indexOf("aiCategoryEstimation")]).toBe("Plumbing; Home services");
  });

  it("keeps the default columns: the catalogue's defaultExport fields, in catalogue order", () => {
    // What the default CSV held before the catalogue grew; new fields are not added to it.
    expect(DEFAULT_COLUMNS).toEqual([
      "id",
      "companyName",
      "website",
      "email",
      "emailSecondary",
      "phone",
      "phoneSecondary",
      "address",
      "city",
      "state",
      "zip",
      "country",
      "category",
      "aiCategoryEstimation",
      "description",
      "stars",
      "reviewCount",
      "lastBuyingSignal",
      "buyingSignalType",
      "lastUpdated",
    ]);
    const order = LEAD_FIELDS.map((f) => f.name);
    expect([...DEFAULT_COLUMNS].sort((a, b) => order.indexOf(a) - order.indexOf(b))).toEqual(DEFAULT_COLUMNS);
  });

  it("takes the API's Lead shape as is", async () => {
    const lead = sampleLead() as unknown as ApiLead;
    const rows = parseCsv(await writeFile(format(), [lead]));
    expect(rows[1]![0]).toBe(lead.companyName);
  });

  it("writes only the header for no leads", async () => {
    expect(parseCsv(await writeFile(format(), []))).toEqual([
      ["Company", "Spacer", "Phone", "Signals", "Stars"],
    ]);
  });
});

describe("JSON writer", () => {
  it("writes an array of objects keyed by export names with JSON values", async () => {
    const leads = [sampleLead({ companyName: "=1+1" }), sampleLead({ stars: null })];
    const rows = JSON.parse((await writeFile(format({ fileType: "json", startRow: 5 }), leads)).toString());
    expect(rows).toEqual([
      { Company: "=1+1", Spacer: "", Phone: "(512) 555-0100", Signals: ["new_website"], Stars: 4.5 },
      {
        Company: leads[1]!.companyName,
        Spacer: "",
        Phone: "(512) 555-0100",
        Signals: ["new_website"],
        Stars: null,
      },
    ]);
    expect(JSON.parse((await writeFile(format({ fileType: "json" }), [])).toString())).toEqual([]);
  });
});

describe("the new lead fields under the real service's sourceField keys", () => {
  const realKeys = format({
    fieldMappings: [
      { sourceField: "wGeoLat", exportName: "Latitude", type: "field" },
      { sourceField: "wRedirectYn", exportName: "Redirect", type: "field" },
      { sourceField: "wFounderEmail", exportName: "Founder Email(s)", type: "field" },
      { sourceField: "wOpenPositions", exportName: "Number of Job Postings", type: "field" },
      { sourceField: "wEmailSecurity", exportName: "Website Email Security", type: "field" },
      { sourceField: "wProfileDate", exportName: "Registration Date", type: "field" },
    ],
  });
  const lead = sampleLead({ founderEmails: ["a@x.com", "b@x.com"], openPositions: 0 });

  it("are columns of the right kinds", () => {
    expect(columnsOf(realKeys).map((c) => [c.field?.name, c.kind])).toEqual([
      ["latitude", "number"],
      ["redirect", "boolean"],
      ["founderEmails", "text"],
      ["openPositions", "number"],
      ["websiteEmailSecurity", "text"],
      ["registrationDate", "text"],
    ]);
  });

  it("are written to CSV, JSON and XLSX", async () => {
    expect(parseCsv(await writeFile(realKeys, [lead]))[1]).toEqual([
      "30.2672",
      "false",
      "a@x.com; b@x.com",
      "0",
      "spf; dmarc",
      "2018-11-20",
    ]);
    const json = JSON.parse((await writeFile({ ...realKeys, fileType: "json" }, [lead])).toString());
    expect(json).toEqual([
      {
        Latitude: 30.2672,
        Redirect: false,
        "Founder Email(s)": ["a@x.com", "b@x.com"],
        "Number of Job Postings": 0,
        "Website Email Security": ["spf", "dmarc"],
        "Registration Date": "2018-11-20",
      },
    ]);
    const sheet = await loadSheet(await writeFile({ ...realKeys, fileType: "xlsx" }, [lead]));
    expect([1, 2, 3, 4, 5].map((c) => sheet.getRow(2).getCell(c).value)).toEqual([
      30.2672,
      false,
      "a@x.com; b@x.com",
      0,
      "spf; dmarc",
    ]);
  });
});

describe("XLSX writer", () => {
  it("writes headers at startRow, typed numbers, spacers and neutralised text, read back by exceljs", async () => {
    const leads = [
      sampleLead({ companyName: "@SUM(A1:A2)", phone: "-1" }),
      sampleLead({ companyName: "B", stars: 3 }),
    ];
    const rows = await readXlsx(await writeFile(format({ fileType: "xlsx", startRow: 3 }), leads));
    expect(rows).toEqual([
      [null, null, null, null, null],
      [null, null, null, null, null],
      ["Company", "Spacer", "Phone", "Signals", "Stars"],
      ["'@SUM(A1:A2)", null, "'-1", "new_website", 4.5],
      ["B", null, "(512) 555-0100", "new_website", 3],
    ]);
  });

  it("leaves the header out and caps long cells", async () => {
    const rows = await readXlsx(
      await writeFile(format({ fileType: "xlsx", includeHeaders: false }), [
        sampleLead({ companyName: "z".repeat(40_000) }),
      ]),
    );
    expect(rows).toHaveLength(1);
    expect(String(rows[0]![0])).toHaveLength(MAX_CELL_CHARS);
  });

  it("makes the header row bold, frozen and filtered, and only the header row bold", async () => {
    const f = format({ fileType: "xlsx", startRow: 3 });
    const sheet = await loadSheet(await writeFile(f, sampleLeads(2)));
    for (let c = 1; c <= 5; c += 1) {
      expect(sheet.getRow(3).getCell(c).font?.bold, `header cell ${c}`).toBe(true);
      expect(sheet.getRow(4).getCell(c).font?.bold ?? false, `data cell ${c}`).toBe(false);
    }
    // The pane below the header scrolls; everything down to the header stays in view.
    expect(sheet.views).toEqual([expect.objectContaining({ state: "frozen", ySplit: 3, topLeftCell: "A4" })]);
    // The filter spans the header and every data row, over every column.
    expect(sheet.autoFilter).toBe("A3:E5");
  });

  it("without headers: no bold row, no frozen pane, no auto-filter; rows above startRow empty", async () => {
    const f = format({ fileType: "xlsx", includeHeaders: false, startRow: 2 });
    const sheet = await loadSheet(
      await writeFile(
        f,
        sampleLeads(2, () => ({ companyName: "Acme" })),
      ),
    );
    expect(sheet.getRow(1).cellCount).toBe(0);
    expect(sheet.getRow(2).getCell(1).value).toBe("Acme");
    expect(sheet.getRow(2).getCell(1).font?.bold ?? false).toBe(false);
    expect(sheet.rowCount).toBe(3);
    // exceljs reads a sheet without a <sheetViews> element as null views.
    expect((sheet.views as typeof sheet.views | null) ?? []).toEqual([]);
    expect(sheet.autoFilter).toBeUndefined();
  });

  it("sizes columns from the header and the first leads, within bounds", async () => {
    const f = format({
      fileType: "xlsx",
      fieldMappings: [
        { sourceField: "companyName", exportName: "Company", type: "field" },
        { sourceField: "", exportName: "S", type: "spacer" },
        { sourceField: "description", exportName: "Description", type: "field" },
        { sourceField: "website", exportName: "A rather long header name", type: "field" },
      ],
    });
    const sheet = await loadSheet(
      await writeFile(f, [
        sampleLead({ companyName: "Company with a longer name", description: "d".repeat(500), website: "w" }),
      ]),
    );
    const widths = [1, 2, 3, 4].map((c) => sheet.getColumn(c).width);
    expect(widths).toEqual([
      "Company with a longer name".length + 3,
      MIN_COLUMN_WIDTH,
      MAX_COLUMN_WIDTH,
      "A rather long header name".length + 3,
    ]);
  });

  it("types numbers and booleans, keeps number-like text as text and leaves empty values empty", async () => {
    const f = format({
      fileType: "xlsx",
      fieldMappings: [
        { sourceField: "reviewCount", exportName: "Reviews", type: "field" },
        { sourceField: "isChain", exportName: "Chain", type: "field" },
        { sourceField: "zip", exportName: "Zip", type: "field" },
        { sourceField: "stars", exportName: "Stars", type: "field" },
        { sourceField: "email", exportName: "Email", type: "field" },
      ],
    });
    const rows = await readXlsx(
      await writeFile(f, [
        sampleLead({ reviewCount: -5, isChain: true, zip: "01234", stars: 0, email: "" }),
        sampleLead({ reviewCount: null, isChain: false, zip: "=1+1", stars: null, email: null }),
      ]),
    );
    expect(rows.slice(1)).toEqual([
      [-5, true, "01234", 0, null],
      [null, false, "'=1+1", null, null],
    ]);
  });

  it("neutralises formulas in values and headers, never in numbers", async () => {
    const f = format({
      fileType: "xlsx",
      fieldMappings: [
        { sourceField: "companyName", exportName: "=Total", type: "field" },
        { sourceField: "reviewCount", exportName: "+Reviews", type: "field" },
      ],
    });
    const file = await writeFile(f, [
      sampleLead({ companyName: '=HYPERLINK("http://evil")', reviewCount: -3 }),
    ]);
    const sheet = await loadSheet(file);
    expect(sheet.getCell("A1").value).toBe("'=Total");
    expect(sheet.getCell("B1").value).toBe("'+Reviews");
    expect(sheet.getCell("A2").value).toBe('\'=HYPERLINK("http://evil")');
    expect(sheet.getCell("B2").value).toBe(-3);
    // No cell of the file carries a formula.
    expect(sheetXml(file)).not.toMatch(/<f[ >]/);
  });

  it("keeps CR, white space at either end and _xHHHH_ text; removes what XML cannot hold", async () => {
    const f = format({
      fileType: "xlsx",
      fieldMappings: [
        { sourceField: "companyName", exportName: "Company", type: "field" },
        { sourceField: "city", exportName: "City", type: "field" },
        { sourceField: "street", exportName: "Street", type: "field" },
        { sourceField: "description", exportName: "Description", type: "field" },
      ],
    });
    const sheet = await loadSheet(
      await writeFile(f, [
        sampleLead({
          companyName: "  a\r\nb  ",
          city: "\rCR",
          street: "_x0041_ and _X000d_",
          description: "bell\u0007 and\u0000 nul",
        }),
      ]),
    );
    expect(cellText(sheet.getCell("A2").value)).toBe("  a\r\nb  ");
    expect(cellText(sheet.getCell("B2").value)).toBe("'\rCR");
    expect(cellText(sheet.getCell("C2").value)).toBe("_x0041_ and _X000d_");
    expect(cellText(sheet.getCell("D2").value)).toBe("bell and nul");
  });

  it("types booleans, escapes markup and fills columns past Z", async () => {
    const f = format({
      fileType: "xlsx",
      fieldMappings: [
        { sourceField: "companyName", exportName: "Company", type: "field" },
        { sourceField: "isChain", exportName: "Chain", type: "field" },
        ...Array.from({ length: 26 }, (_, i) => ({
          sourceField: "",
          exportName: `S${i}`,
          type: "spacer" as const,
        })),
        { sourceField: "reviewCount", exportName: "Reviews", type: "field" },
        { sourceField: "city", exportName: "<City & Co>", type: "field" },
      ],
    });
    const sheet = await loadSheet(
      await writeFile(f, [
        sampleLead({ companyName: "plain", isChain: true, reviewCount: 7, city: "x < y & z" }),
        sampleLead({ companyName: "plain", isChain: false, reviewCount: null, city: null }),
      ]),
    );
    expect(sheet.name).toBe("Leads");
    expect(sheet.getCell("B2").value).toBe(true);
    expect(sheet.getCell("B3").value).toBe(false);
    expect(sheet.getCell("AC1").value).toBe("Reviews");
    expect(sheet.getCell("AC2").value).toBe(7);
    expect(sheet.getCell("AC3").value).toBeNull();
    expect(sheet.getCell("AD1").value).toBe("<City & Co>");
    expect(sheet.getCell("AD2").value).toBe("x < y & z");
    expect(sheet.autoFilter).toBe("A1:AD3");
    expect(sheet.rowCount).toBe(3);
  });

  it("writes only the header of an empty file, filtered and frozen", async () => {
    const sheet = await loadSheet(await writeFile(format({ fileType: "xlsx" }), []));
    expect(sheet.rowCount).toBe(1);
    expect(sheet.getCell("E1").value).toBe("Stars");
    expect(sheet.autoFilter).toBe("A1:E1");
    expect(sheet.views[0]).toMatchObject({ state: "frozen", ySplit: 1 });
  });

  it("uses no shared strings and styles only the header", async () => {
    const file = await writeFile(format({ fileType: "xlsx" }), sampleLeads(3));
    const xml = sheetXml(file);
    expect(xml).not.toMatch(/t="s"/);
    expect(xml.match(/ s="\d+"/g)).toHaveLength(5);
  });

  it("waits while the reader of the workbook is behind, and goes on once it reads", async () => {
    const f = format({ fileType: "xlsx" });
    const writer = createFileWriter("xlsx", { columns: columnsOf(f), includeHeaders: true, startRow: 1 });
    // Text that hardly compresses, so the workbook's own buffers fill up: about 1 MB per batch.
    const batch = () =>
      rowsOf(
        sampleLeads(1_000, () => ({ companyName: randomBytes(500).toString("hex") })),
        f,
      )[0]!;
    let written = 0;
    const writing = (async () => {
      for (let i = 0; i < 10; i += 1) {
        await writer.write(batch());
        written += 1;
      }
    })();
    const pause = () => new Promise((resolve) => setTimeout(resolve, 250));
    // Nobody reads the output: the writer stalls after a few of the ten batches.
    await pause();
    const stalledAt = written;
    await pause();
    expect(written).toBe(stalledAt);
    expect(written).toBeLessThan(10);
    const read = text(writer.output);
    await writing;
    await writer.end();
    expect((await read).length).toBeGreaterThan(5_000_000);
    expect(written).toBe(10);
  });

  it("finds the sheet's entry stream in exceljs (what its back-pressure reads)", () => {
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: new PassThrough() });
    expect(new SheetBacklog(workbook.addWorksheet("Leads")).entryFound).toBe(true);
  });
});

describe("split planning", () => {
  const names = (f: FileFormat, n: number) =>
    planExport(f, n, "leads-main-2026-11-22").files.map((p) => [p.fileName, p.rows]);

  it("names files after the database and the date", () => {
    expect(exportBaseName(new Date("2026-11-22T23:59:00Z"))).toBe("leads-main-2026-11-22");
    expect(names(format(), 5)).toEqual([["leads-main-2026-11-22.csv", 5]]);
  });

  it("max_rows: files of at most maxRowsPerFile, plus _total", () => {
    const f = format({ splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 10, includeTotal: true });
    expect(names(f, 25)).toEqual([
      ["leads-main-2026-11-22_part1.csv", 10],
      ["leads-main-2026-11-22_part2.csv", 10],
      ["leads-main-2026-11-22_part3.csv", 5],
      ["leads-main-2026-11-22_total.csv", 25],
    ]);
    // One part is a single file: no suffix, no _total.
    expect(names(f, 10)).toEqual([["leads-main-2026-11-22.csv", 10]]);
  });

  it("equal_parts: exactly numberOfParts files, as even as possible", () => {
    const f = format({ fileType: "json", splitFiles: true, splitMode: "equal_parts", numberOfParts: 3 });
    expect(names(f, 10).map(([, rows]) => rows)).toEqual([4, 3, 3]);
    expect(names(f, 1).map(([, rows]) => rows)).toEqual([1, 0, 0]);
    expect(names(f, 10)[0]![0]).toBe("leads-main-2026-11-22_part1.json");
  });

  it("parts_max_rows: numberOfParts files of at most maxRowsPerFile; capacity is their product", () => {
    const f = format({ splitFiles: true, splitMode: "parts_max_rows", numberOfParts: 2, maxRowsPerFile: 10 });
    expect(formatLeadCapacity(f)).toBe(20);
    expect(names(f, 15).map(([, rows]) => rows)).toEqual([8, 7]);
    expect(() => planExport(f, 21, "x")).toThrow(/capacity/);
    expect(formatLeadCapacity(format())).toBeNull();
  });

  it("XLSX over 20,000 rows in one file is export_too_large", () => {
    const check = (f: FileFormat, n: number) => {
      try {
        assertExportFits(f, n);
        return "ok";
      } catch (err) {
        return (err as ApiError).code;
      }
    };
    const xlsx = format({ fileType: "xlsx" });
    expect(check(xlsx, 20_000)).toBe("ok");
    expect(check(xlsx, 20_001)).toBe("export_too_large");
    expect(check(format({ fileType: "csv" }), 100_000)).toBe("ok");
    const split = { ...xlsx, splitFiles: true, splitMode: "max_rows" as const, maxRowsPerFile: 20_000 };
    expect(check(split, 100_000)).toBe("ok");
    expect(check({ ...split, includeTotal: true }, 30_000)).toBe("export_too_large");
    expect(check({ ...split, includeTotal: true }, 20_000)).toBe("ok");
    const equal = { ...xlsx, splitFiles: true, splitMode: "equal_parts" as const, numberOfParts: 2 };
    expect(check(equal, 40_000)).toBe("ok");
    expect(check(equal, 40_001)).toBe("export_too_large");
  });
});

describe("writeExportFiles", () => {
  it("stores one file and answers it", async () => {
    const written = await writeExportFiles(storage, {
      accountId: 1,
      rows: rowsOf(sampleLeads(3), format()),
      totalCount: 3,
      format: format(),
      date: new Date("2026-11-22T12:00:00Z"),
    });
    expect(written.files).toHaveLength(1);
    expect(written.answer).toMatchObject({
      contentType: "text/csv",
      fileName: "leads-main-2026-11-22.csv",
      temporary: false,
    });
    const body = await storage.get(written.answer.storageKey);
    const csv = await text(body!);
    expect(parseCsv(Buffer.from(csv))).toHaveLength(4);
    expect(written.files[0]!.size).toBe(Buffer.byteLength(csv));
  });

  it("splits into parts and _total from an async iterable and answers a ZIP of them", async () => {
    const leads = sampleLeads(25, (i) => ({ companyName: `Lead ${i}` }));
    const f = format({ splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 10, includeTotal: true });
    // Batches of 7 rows: they straddle the parts' boundaries.
    const rows = rowsOf(leads, f)[0]!;
    async function* stream() {
      for (let i = 0; i < rows.length; i += 7) yield rows.slice(i, i + 7);
    }
    const written = await writeExportFiles(storage, {
      accountId: 1,
      rows: stream(),
      totalCount: 25,
      format: f,
      date: new Date("2026-11-22T12:00:00Z"),
    });
    expect(written.files.map((file) => [file.fileName, file.rows, file.partNumber, file.isTotal])).toEqual([
      ["leads-main-2026-11-22_part1.csv", 10, 1, false],
      ["leads-main-2026-11-22_part2.csv", 10, 2, false],
      ["leads-main-2026-11-22_part3.csv", 5, 3, false],
      ["leads-main-2026-11-22_total.csv", 25, null, true],
    ]);
    expect(written.answer).toMatchObject({
      contentType: "application/zip",
      fileName: "leads-main-2026-11-22.zip",
      temporary: true,
    });
    const chunks: Buffer[] = [];
    for await (const chunk of (await storage.get(written.answer.storageKey))!) chunks.push(chunk as Buffer);
    const members = readZip(Buffer.concat(chunks));
    expect([...members.keys()]).toEqual(written.files.map((file) => file.fileName));
    const companies = (name: string) =>
      parseCsv(members.get(name)!)
        .slice(1)
        .map((r) => r[0]);
    expect(companies("leads-main-2026-11-22_part1.csv")).toEqual(
      leads.slice(0, 10).map((l) => l.companyName),
    );
    expect(companies("leads-main-2026-11-22_part3.csv")).toEqual(leads.slice(20).map((l) => l.companyName));
    expect(companies("leads-main-2026-11-22_total.csv")).toEqual(leads.map((l) => l.companyName));
  });

  it("zips XLSX parts and _total that exceljs reads back, each with its own bold, frozen, filtered header", async () => {
    const f = format({
      fileType: "xlsx",
      splitFiles: true,
      splitMode: "max_rows",
      maxRowsPerFile: 3,
      includeTotal: true,
      startRow: 2,
    });
    const leads = sampleLeads(5, (i) => ({ companyName: `Lead ${i}` }));
    // Batches of 2 rows: they straddle the parts' boundaries.
    const rows = rowsOf(leads, f)[0]!;
    const written = await writeExportFiles(storage, {
      accountId: 1,
      rows: [rows.slice(0, 2), rows.slice(2, 4), rows.slice(4)],
      totalCount: 5,
      format: f,
    });
    const chunks: Buffer[] = [];
    for await (const chunk of (await storage.get(written.answer.storageKey))!) chunks.push(chunk as Buffer);
    const members = readZip(Buffer.concat(chunks));
    expect([...members.keys()].map((name) => name.replace(/^.*_/, ""))).toEqual([
      "part1.xlsx",
      "part2.xlsx",
      "total.xlsx",
    ]);
    const expected = [leads.slice(0, 3), leads.slice(3), leads];
    const files = [...members.values()];
    for (const [i, file] of files.entries()) {
      const sheet = await loadSheet(file);
      const last = 2 + expected[i]!.length;
      expect(sheet.getRow(1).cellCount).toBe(0);
      expect(sheet.getCell("A2").value).toBe("Company");
      expect(sheet.getCell("A2").font?.bold).toBe(true);
      expect(sheet.views[0]).toMatchObject({ state: "frozen", ySplit: 2, topLeftCell: "A3" });
      expect(sheet.autoFilter).toBe(`A2:E${last}`);
      const companies = [];
      for (let r = 3; r <= last; r += 1) companies.push(sheet.getCell(`A${r}`).value);
      expect(companies).toEqual(expected[i]!.map((lead) => lead.companyName));
      expect(sheet.rowCount).toBe(last);
    }
  });

  it("refuses an XLSX file over 20,000 rows before reading any lead", async () => {
    let read = 0;
    function* rows() {
      read += 1;
      yield rowsOf([sampleLead()])[0]!;
    }
    await expect(
      writeExportFiles(storage, {
        accountId: 2,
        rows: rows(),
        totalCount: 20_001,
        format: format({ fileType: "xlsx" }),
      }),
    ).rejects.toMatchObject({ status: 400, code: "export_too_large" });
    expect(read).toBe(0);
  });

  it("fails and removes what it wrote when the leads do not match the announced count", async () => {
    const accountRoot = join(root, "exports", "3");
    await expect(
      writeExportFiles(storage, {
        accountId: 3,
        rows: rowsOf(sampleLeads(2)),
        totalCount: 3,
        format: format(),
      }),
    ).rejects.toThrow(/announced/);
    await expect(
      writeExportFiles(storage, {
        accountId: 3,
        rows: rowsOf(sampleLeads(4)),
        totalCount: 3,
        format: format(),
      }),
    ).rejects.toThrow(/announced/);
    const leftover = readdirSync(accountRoot, { recursive: true, withFileTypes: true }).filter((e) =>
      e.isFile(),
    );
    expect(leftover).toEqual([]);
  });

  it("fails without hanging when the storage fails part way, and removes what it stored", async () => {
    const deleted: string[] = [];
    const failing: FileStorage = {
      async put(key, body) {
        let bytes = 0;
        for await (const chunk of body as Readable) {
          bytes += (chunk as Buffer).length;
          if (bytes > 10_000) throw new Error("disk full");
        }
        return { size: bytes };
      },
      get: async () => undefined,
      open: async () => undefined,
      size: async () => undefined,
      delete: async (key) => {
        deleted.push(key);
      },
      deletePrefix: async () => undefined,
    };
    for (const fileType of ["csv", "json", "xlsx"] as const) {
      await expect(
        writeExportFiles(failing, {
          accountId: 4,
          rows: rowsOf(sampleLeads(2_000), format({ fileType })),
          totalCount: 2_000,
          format: format({ fileType }),
        }),
      ).rejects.toThrow();
    }
    expect(deleted).toHaveLength(3);
  });
});
