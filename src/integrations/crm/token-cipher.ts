import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * CRM tokens at rest: AES-256-GCM with the deployment's `CRM_TOKEN_KEY`, stored as
 * `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url; the key id is the first 8 hex digits of the
 * key's SHA-256, so a rotated key is found among `CRM_TOKEN_KEYS_PREVIOUS`). Rotation
 * (docs/integrations.md): set the new key as `CRM_TOKEN_KEY` and the old one in
 * `CRM_TOKEN_KEYS_PREVIOUS`; tokens are re-encrypted with the new key at their next refresh.
 */
export class TokenCipher {
  private readonly keys: { id: string; key: Buffer }[];

  constructor(keys: readonly Buffer[]) {
    this.keys = keys.map((key) => ({ id: keyId(key), key }));
  }

  /** Whether a key is configured (a CRM cannot be used without one). */
  get ready(): boolean {
    return this.keys.length > 0;
  }

  encrypt(plain: string): string {
    const current = this.keys[0];
    if (!current) throw new Error("no CRM token key configured");
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", current.key, iv);
    const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return ["v1", current.id, b64(iv), b64(cipher.getAuthTag()), b64(data)].join(".");
  }

  /** The plain token; throws when no configured key encrypted it or the text was altered. */
  decrypt(stored: string): string {
    const [version, id, iv, tag, data] = stored.split(".");
    if (version !== "v1" || !id || iv === undefined || tag === undefined || data === undefined) {
      throw new Error("not an encrypted CRM token");
    }
    const entry = this.keys.find((k) => k.id === id);
    if (!entry) throw new Error(`CRM token key ${id} is not configured`);
    const decipher = createDecipheriv("aes-256-gcm", entry.key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  }

  /** Whether a stored token was encrypted with an older key (re-encrypted at its next write). */
  isStale(stored: string): boolean {
    return stored.split(".")[1] !== this.keys[0]?.id;
  }
}

function keyId(key: Buffer): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 8);
}

function b64(buf: Buffer): string {
  return buf.toString("base64url");
}
