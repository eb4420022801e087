import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

// s3rver 3.7.1 checks a request's access key id and a presigned URL's expiry, but not its
// Signature Version 4 signature ("unimplemented" in its source). This check runs in front of it,
// as S3 itself would: every request must be signed (header or query) with the key's secret, over
// its method, path, query and signed headers; anything else is refused with 403.

const ALGORITHM = "AWS4-HMAC-SHA256";

/** RFC 3986 encoding, as SigV4 wants it. */
function encode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function canonicalQuery(query: URLSearchParams): string {
  const pairs = [...query.entries()]
    .filter(([key]) => key !== "X-Amz-Signature")
    .map(([key, value]) => [encode(key), encode(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([key, value]) => `${key}=${value}`).join("&");
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const hmac = (key: Buffer | string, text: string) => createHmac("sha256", key).update(text).digest();

/** What a request says it was signed with. */
interface Claimed {
  credential: string;
  signedHeaders: string[];
  signature: string;
  amzDate: string;
  payloadHash: string;
}

function claimedOf(req: IncomingMessage, query: URLSearchParams): Claimed | undefined {
  const auth = req.headers.authorization;
  if (auth?.startsWith(`${ALGORITHM} `)) {
    const parts = Object.fromEntries(
      auth
        .slice(ALGORITHM.length + 1)
        .split(",")
        .map((p) => p.trim().split("=") as [string, string]),
    );
    if (!parts.Credential || !parts.SignedHeaders || !parts.Signature) return undefined;
    return {
      credential: parts.Credential,
      signedHeaders: parts.SignedHeaders.split(";"),
      signature: parts.Signature,
      amzDate: String(req.headers["x-amz-date"] ?? ""),
      payloadHash: String(req.headers["x-amz-content-sha256"] ?? sha256("")),
    };
  }
  if (query.get("X-Amz-Algorithm") === ALGORITHM) {
    return {
      credential: query.get("X-Amz-Credential") ?? "",
      signedHeaders: (query.get("X-Amz-SignedHeaders") ?? "").split(";"),
      signature: query.get("X-Amz-Signature") ?? "",
      amzDate: query.get("X-Amz-Date") ?? "",
      payloadHash: "UNSIGNED-PAYLOAD",
    };
  }
  return undefined;
}

/**
 * Why the request's SigV4 signature is not valid for `secrets` (access key id -> secret), or
 * undefined when it is. A key id not in `secrets` is left to the server (it refuses it).
 */
export function signatureProblem(req: IncomingMessage, secrets: Record<string, string>): string | undefined {
  const url = new URL(req.url ?? "/", "http://s3.local");
  const claimed = claimedOf(req, url.searchParams);
  if (!claimed) return "the request is not signed";
  const [keyId, date, region, service, terminal] = claimed.credential.split("/");
  if (!keyId || !date || !region || !service || terminal !== "aws4_request") return "malformed credential";
  const secret = secrets[keyId];
  if (secret === undefined) return undefined;
  const headers = claimed.signedHeaders
    .map((name) => {
      const value = req.headers[name];
      const text = Array.isArray(value) ? value.join(",") : (value ?? "");
      return `${name}:${text.trim().replace(/\s+/g, " ")}\n`;
    })
    .join("");
  const canonicalRequest = [
    req.method,
    url.pathname,
    canonicalQuery(url.searchParams),
    headers,
    claimed.signedHeaders.join(";"),
    claimed.payloadHash,
  ].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = [ALGORITHM, claimed.amzDate, scope, sha256(canonicalRequest)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), "aws4_request");
  const expected = hmac(key, stringToSign);
  const given = Buffer.from(claimed.signature, "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return "signature does not match";
  return undefined;
}
