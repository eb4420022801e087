import { PassThrough } from "node:stream";
import { xlsxCellText } from "./cells.js";
import { ChunkedText, rowsIn, type FileWriter, type RowBatch, type WriterOptions } from "./writer.js";
import { createZip } from "./zip.js";

/** Name of the one worksheet of an exported workbook. */
export const SHEET_NAME = "Leads";

/**
 * zlib level of the workbook's parts: 1 deflates several times faster than the default 6, and a
 * sheet's repetitive markup still shrinks about tenfold.
 */
const DEFLATE_LEVEL = 1;

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships";
const DOC_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const OOXML_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml";

/** The package parts besides the sheet: content types, relationships, workbook and styles. */
const STATIC_PARTS: readonly { name: string; xml: string }[] = [
  {
    name: "[Content_Types].xml",
    xml:
      `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
      `<Default Extension="xml" ContentType="application/xml"/>` +
      `<Override PartName="/xl/workbook.xml" ContentType="${OOXML_TYPE}.sheet.main+xml"/>` +
      `<Override PartName="/xl/worksheets/sheet1.xml" ContentType="${OOXML_TYPE}.worksheet+xml"/>` +
      `<Override PartName="/xl/styles.xml" ContentType="${OOXML_TYPE}.styles+xml"/>` +
      `</Types>`,
  },
  {
    name: "_rels/.rels",
    xml:
      `<Relationships xmlns="${REL_NS}">` +
      `<Relationship Id="rId1" Type="${DOC_REL}/officeDocument" Target="xl/workbook.xml"/>` +
      `</Relationships>`,
  },
  {
    name: "xl/workbook.xml",
    xml:
      `<workbook xmlns="${MAIN_NS}" xmlns:r="${DOC_REL}">` +
      `<sheets><sheet name="${SHEET_NAME}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  },
  {
    name: "xl/_rels/workbook.xml.rels",
    xml:
      `<Relationships xmlns="${REL_NS}">` +
      `<Relationship Id="rId1" Type="${DOC_REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
      `<Relationship Id="rId2" Type="${DOC_REL}/styles" Target="styles.xml"/>` +
      `</Relationships>`,
  },
  {
    name: "xl/styles.xml",
    xml:
      `<styleSheet xmlns="${MAIN_NS}">` +
      `<fonts count="1"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>` +
      `<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
      `<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
      `<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
      `<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>` +
      `<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>` +
      `</styleSheet>`,
  },
];

const SHEET_START = `${XML_HEAD}<worksheet xmlns="${MAIN_NS}"><sheetData>`;
const SHEET_END = "</sheetData></worksheet>";

/** `A`, `B`, ..., `Z`, `AA`, ...: the letters of the column at `index` (0-based). */
export function columnLetters(index: number): string {
  let letters = "";
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}

const XML_SPECIAL = /[&<>\r]/;
const XML_SPECIAL_ALL = /[&<>\r]/g;
const XML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;" };

/** Text escaped for an XML element (a CR as a reference, since parsers turn a raw CR into LF). */
function escapeXml(text: string): string {
  return XML_SPECIAL.test(text) ? text.replace(XML_SPECIAL_ALL, (c) => XML_ESCAPES[c]!) : text;
}

/** An inline-string cell (`xml:space="preserve"` keeps white space at either end). */
function textCell(ref: string, text: string): string {
  const edges = text.charCodeAt(0) <= 32 || text.charCodeAt(text.length - 1) <= 32;
  const open = edges ? '<t xml:space="preserve">' : "<t>";
  return `<c r="${ref}" t="inlineStr"><is>${open}${escapeXml(text)}</t></is></c>`;
}

/**
 * An XLSX writer of `text`-encoded rows: one worksheet (`Leads`) of inline strings, typed numbers
 * and booleans, no shared strings and a single default style, so each row is written and
 * forgotten (memory does not grow with the file). Text cells (headers included) are made safe
 * (`xlsxCellText`); empty values leave the cell out; rows above `startRow` are left out.
 */
export function createXlsxWriter({ columns, includeHeaders, startRow }: WriterOptions): FileWriter {
  const archive = createZip(DEFLATE_LEVEL);
  for (const part of STATIC_PARTS) archive.append(XML_HEAD + part.xml, { name: part.name });
  const sheet = new PassThrough();
  archive.append(sheet, { name: "xl/worksheets/sheet1.xml" });
  // When the archive is torn down (its reader failed), a write waiting for the sheet to drain and
  // the end waiting for the archive must fail instead of waiting forever. (After a normal end the
  // archive closes too; by then nothing waits on this.)
  const torn = new Promise<never>((_resolve, reject) => {
    archive.once("close", () => {
      sheet.destroy();
      reject(new Error("the workbook stream closed before it was written"));
    });
  });
  torn.catch(() => undefined);

  const letters = columns.map((_, i) => columnLetters(i));
  const kinds = columns.map((column) => column.kind);
  const out = new ChunkedText(sheet);
  out.add(SHEET_START);
  let nextRow = startRow;
  let started = false;

  const start = (): void => {
    if (started) return;
    started = true;
    if (!includeHeaders) return;
    let xml = `<row r="${nextRow}">`;
    columns.forEach((column, i) => {
      const text = xlsxCellText(column.header);
      if (text !== "") xml += textCell(`${letters[i]}${nextRow}`, text);
    });
    out.add(`${xml}</row>`);
    nextRow += 1;
  };

  return {
    output: archive,
    async write(batch: RowBatch) {
      const rows = rowsIn(batch);
      start();
      for (const row of rows) {
        const r = nextRow;
        nextRow += 1;
        let xml = `<row r="${r}">`;
        for (let i = 0; i < kinds.length; i += 1) {
          const value = row[i];
          if (value === null || value === undefined || value === "") continue;
          const ref = letters[i]! + r;
          switch (kinds[i]) {
            case "number": {
              const number = Number(value);
              if (Number.isFinite(number)) xml += `<c r="${ref}"><v>${number}</v></c>`;
              break;
            }
            case "boolean":
              xml += `<c r="${ref}" t="b"><v>${value === "true" ? 1 : 0}</v></c>`;
              break;
            default: {
              const text = xlsxCellText(value);
              if (text !== "") xml += textCell(ref, text);
            }
          }
        }
        if (out.add(`${xml}</row>`)) await out.flush();
      }
    },
    async end() {
      start();
      out.add(SHEET_END);
      await out.flush();
      sheet.end();
      await Promise.race([archive.finalize(), torn]);
    },
  };
}
