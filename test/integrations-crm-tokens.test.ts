import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { TokenCipher } from "../src/integrations/crm/token-cipher.js";

describe("CRM tokens at rest", () => {
  it("encrypts with the current key and reads tokens of a previous key after a rotation", () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = new TokenCipher([oldKey]);
    const stored = before.encrypt("access-token-1");
    expect(stored).not.toContain("access-token-1");
    expect(before.decrypt(stored)).toBe("access-token-1");

    const rotated = new TokenCipher([newKey, oldKey]);
    expect(rotated.decrypt(stored)).toBe("access-token-1");
    expect(rotated.isStale(stored)).toBe(true);
    const rewritten = rotated.encrypt("access-token-1");
    expect(rotated.isStale(rewritten)).toBe(false);
    expect(() => new TokenCipher([newKey]).decrypt(stored)).toThrow(/not configured/);
  });

  it("refuses an altered token", () => {
    const cipher = new TokenCipher([randomBytes(32)]);
    const parts = cipher.encrypt("secret").split(".");
    parts[4] = Buffer.from("other!").toString("base64url");
    expect(() => cipher.decrypt(parts.join("."))).toThrow();
  });

  it("reads the CRM configuration: a client needs both halves and a token key", () => {
    const key = randomBytes(32).toString("base64");
    const config = loadConfig({
      CRM_CONTACTS_CLIENT_ID: "id",
      CRM_CONTACTS_CLIENT_SECRET: "secret",
      CRM_CONTACTS_API_BASE: "http://127.0.0.1:9/",
      CRM_TOKEN_KEY: key,
      CRM_TOKEN_KEYS_PREVIOUS: `${randomBytes(32).toString("hex")}, `,
    });
    expect(config.crm.contacts).toEqual({
      clientId: "id",
      clientSecret: "secret",
      apiBase: "http://127.0.0.1:9",
      authBase: "https://app.hubspot.com",
    });
    expect(config.crm.leads).toBeUndefined();
    expect(config.crm.tokenKeys).toHaveLength(2);
    expect(() => loadConfig({ CRM_DEALS_CLIENT_ID: "id" })).toThrow(/go together/);
    expect(() => loadConfig({ CRM_DEALS_CLIENT_ID: "id", CRM_DEALS_CLIENT_SECRET: "s" })).toThrow(
      /CRM_TOKEN_KEY/,
    );
    expect(() => loadConfig({ CRM_TOKEN_KEY: "short" })).toThrow(/32 bytes/);
  });
});
