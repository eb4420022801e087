import { inflateRawSync } from "node:zlib";
import type { Db } from "../../src/db/database.js";
import { createExportFormat, type NewFormatInput } from "../../src/export-formats/service.js";
import type { ExportMethod } from "../../src/export-history/entry.js";
import { recordExportFiles } from "../../src/export-history/service.js";
import { columnsOf, encodingOf, type ExportRow } from "../../src/export-files/columns.js";
import { exportRowOf } from "./export-rows.js";
import { defaultFileFormat, type FileFormat } from "../../src/export-files/format.js";
import { writeExportFiles } from "../../src/export-files/store.js";
import type { FileStorage } from "../../src/storage/file-storage.js";

let sequence = 0;

/** A lead in the API's camelCase shape (every field of the catalogue); any field can be overridden. */
export function sampleLead(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence += 1;
  return {
    id: sequence,
    databaseType: "other",
    companyName: `Acme ${sequence} Plumbing`,
    website: `https://acme${sequence}.example.com`,
    registeredUrl: `acme${sequence}.example.com`,
    crawledUrl: `https://acme${sequence}.example.com/`,
    email: `info@acme${sequence}.example.com`,
    emailSecondary: null,
    emailTier1: `owner@acme${sequence}.example.com`,
    emailTier2: null,
    emailTier3: null,
    emailTier4: null,
    emailTier5: null,
    emailTier6: null,
    phone: "(512) 555-0100",
    phoneSecondary: null,
    phoneTotal: 1,
    address: "1 Main St",
    street: "1 Main St",
    city: "Austin",
    state: "TX",
    zip: "78701",
    country: "US",
    category: "Plumber",
    description: "Family plumbing business",
    longDescription: null,
    aiCategoryEstimation: ["Plumbing", "Home services"],
    stars: 4.5,
    reviewCount: 120,
    websiteSchemaTypes: ["LocalBusiness"],
    lastBuyingSignal: "2026-11-01T10:00:00.000Z",
    buyingSignalType: ["new_website"],
    lastUpdated: "2026-11-01T10:00:00.000Z",
    employees: 12,
    foundedDate: "2019-03-01",
    numberOfLocations: 1,
    isChain: false,
    priceRange: "$$",
    legalName: `Acme ${sequence} LLC`,
    naicsCode: "238220",
    founders: ["Ann Smith"],
    openingHours: "Mo-Fr 08:00-17:00",
    socialProfiles: { facebook: "https://facebook.com/acme" },
    webTechnologies: ["WordPress"],
    registrationDate: "2018-11-20",
    redirect: false,
    timeScraped: "2026-10-28T09:15:00.000Z",
    addressFull: "1 Main St, Austin, TX 78701",
    addressSource: "schema_org",
    emailPrimaryProvider: "google.com",
    websiteEmailProvider: "google.com",
    websiteEmailSecurity: ["spf", "dmarc"],
    founderEmails: [`ann@acme${sequence}.example.com`],
    founderPhones: ["(512) 555-0111"],
    latitude: 30.2672,
    longitude: -97.7431,
    areaServed: "Greater Austin Area",
    offers: "Free estimates",
    brand: `Acme ${sequence}`,
    slogan: "Done right the first time",
    logoUrl: `https://acme${sequence}.example.com/logo.png`,
    platform: "WordPress",
    bookingOpsCrmSoftware: "Housecall Pro",
    reputationChatSoftware: null,
    marketingEmailSoftware: "Mailchimp",
    adPixels: "Meta Pixel, Google Ads",
    paymentFinancingSoftware: null,
    openPositions: 2,
    ratingValue: 4.8,
    duns: null,
    ...overrides,
  };
}

/** `count` sample leads. */
export function sampleLeads(count: number, overrides: (i: number) => Record<string, unknown> = () => ({})) {
  return Array.from({ length: count }, (_, i) => sampleLead(overrides(i)));
}

/** Leads (in the API's shape) as one batch of export rows of the format (default: the built-in one). */
export function rowsOf(
  leads: readonly Record<string, unknown>[],
  format: FileFormat = defaultFileFormat(),
): ExportRow[][] {
  const columns = columnsOf(format);
  const encoding = encodingOf(format.fileType);
  return [leads.map((lead) => exportRowOf(lead, columns, encoding))];
}

/** A valid create body; any field can be overridden. */
export function formatBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "My CSV",
    fileType: "csv",
    fieldMappings: [
      { sourceField: "companyName", exportName: "Company", type: "field" },
      { sourceField: "", exportName: "Notes", type: "spacer" },
      { sourceField: "wPhonePrimary", exportName: "Phone", type: "field" },
    ],
    ...overrides,
  };
}

/** A saved export format of the account (through the service, so every rule applies). */
export async function buildFormat(db: Db, accountId: number, overrides: Partial<NewFormatInput> = {}) {
  return createExportFormat(db, accountId, { ...(formatBody() as unknown as NewFormatInput), ...overrides });
}

/** Writes and records an export of `leads` for the account; returns the entries and the answer. */
export async function buildExport(
  deps: { db: Db; storage: FileStorage },
  accountId: number,
  leads: Record<string, unknown>[],
  options: { format?: FileFormat; method?: ExportMethod; date?: Date } = {},
) {
  const format = options.format ?? defaultFileFormat();
  const createdAt = options.date ?? new Date();
  const written = await writeExportFiles(deps.storage, {
    accountId,
    rows: rowsOf(leads, format),
    totalCount: leads.length,
    format,
    date: createdAt,
  });
  const entries = await recordExportFiles(deps.db, {
    accountId,
    written,
    formatName: format.name,
    method: options.method ?? "api",
    createdAt,
  });
  return { entries, answer: written.answer, written };
}

/** supertest parser that keeps the body as a Buffer (for files). */
export function binary(response: unknown, done: (err: Error | null, body: Buffer) => void): void {
  const res = response as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  res.on("data", (chunk: Buffer) => chunks.push(chunk));
  res.on("end", () => done(null, Buffer.concat(chunks)));
  res.on("error", (err: Error) => done(err, Buffer.alloc(0)));
}

/** The members of a ZIP archive (read from its central directory), by name. */
export function readZip(zip: Buffer): Map<string, Buffer> {
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end -= 1;
  if (end < 0) throw new Error("not a zip archive");
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const members = new Map<string, Buffer>();
  for (let i = 0; i < count; i += 1) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error("bad central directory entry");
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localOffset = zip.readUInt32LE(at + 42);
    const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
    const dataStart =
      localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const data = zip.subarray(dataStart, dataStart + compressedSize);
    members.set(name, method === 8 ? inflateRawSync(data) : Buffer.from(data));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return members;
}
