import { SignatureV4 } from "@smithy/signature-v4";
import type { HttpRequest, SourceData } from "@smithy/types";
import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from "node:crypto";
import type { IncomingMessage } from "node:http";

// s3rver 3.7.1 checks a request's access key id and a presigned URL's expiry, but not its
// Signature Version 4 signature ("unimplemented" in its source). This check runs in front of it,
// as S3 itself would: the request is signed again with the key's secret by the AWS SDK's own
// signer (@smithy/signature-v4, as S3 clients sign: paths not escaped again), over the headers
// the request says it signed, and the signatures must be equal; anything else is refused.

const ALGORITHM = "AWS4-HMAC-SHA256";
/** Query parameters a presigned URL's signing adds (the signer adds them again). */
const PRESIGN_PARAMS = /^X-Amz-(Algorithm|Credential|Date|Expires|SignedHeaders|Signature|Security-Token)$/i;

/** SHA-256 (an HMAC with a secret) from node:crypto, in the form the signer takes. */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

function bytes(data: SourceData): string | Uint8Array {
  if (typeof data === "string") return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** What a request says it was signed with. */
interface Claimed {
  credential: string;
  signedHeaders: string[];
  signature: string;
  amzDate: string;
  /** Seconds a presigned URL lasts; undefined for a request signed in its headers. */
  expires?: number;
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
    };
  }
  if (query.get("X-Amz-Algorithm") === ALGORITHM) {
    return {
      credential: query.get("X-Amz-Credential") ?? "",
      signedHeaders: (query.get("X-Amz-SignedHeaders") ?? "").split(";"),
      signature: query.get("X-Amz-Signature") ?? "",
      amzDate: query.get("X-Amz-Date") ?? "",
      expires: Number(query.get("X-Amz-Expires")),
    };
  }
  return undefined;
}

/** `20261127T160000Z` as a Date. */
function parseAmzDate(text: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : undefined;
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(",") : (value ?? "");
}

/**
 * Why the request's SigV4 signature is not valid for `secrets` (access key id -> secret), or
 * undefined when it is. A key id not in `secrets` is left to the server (it refuses it).
 */
export async function signatureProblem(
  req: IncomingMessage,
  secrets: Record<string, string>,
): Promise<string | undefined> {
  const url = new URL(req.url ?? "/", "http://s3.local");
  const claimed = claimedOf(req, url.searchParams);
  if (!claimed) return "the request is not signed";
  const [keyId, date, region, service, terminal] = claimed.credential.split("/");
  if (!keyId || !date || !region || !service || terminal !== "aws4_request") return "malformed credential";
  const secret = secrets[keyId];
  if (secret === undefined) return undefined;
  const signingDate = parseAmzDate(claimed.amzDate);
  if (!signingDate) return "malformed date";

  const headers = Object.fromEntries(
    claimed.signedHeaders.map((name) => [name, headerText(req.headers[name])]),
  );
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    if (claimed.expires !== undefined && PRESIGN_PARAMS.test(key)) continue;
    const had = query[key];
    query[key] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  const signer = new SignatureV4({
    credentials: { accessKeyId: keyId, secretAccessKey: secret },
    region,
    service,
    sha256: Sha256,
    uriEscapePath: false,
  });
  const request: HttpRequest = {
    method: req.method ?? "GET",
    protocol: "http:",
    hostname: "s3.local",
    path: url.pathname,
    query,
    headers,
  };
  let expected: string | undefined;
  if (claimed.expires === undefined) {
    // The payload hash is the one the request names (x-amz-content-sha256), as S3 takes it.
    const signed = await signer.sign(request, { signingDate });
    expected = /Signature=([0-9a-f]+)/.exec(headerText(signed.headers.authorization))?.[1];
  } else {
    // A presigned URL signs no payload: the S3 presigner names UNSIGNED-PAYLOAD in a header that
    // the signer moved into the query; it goes back to a header, to be moved again the same way.
    for (const name of Object.keys(query).filter((key) => key.toLowerCase() === "x-amz-content-sha256")) {
      request.headers[name] = headerText(query[name]);
      delete query[name];
    }
    const presigned = await signer.presign(request, { signingDate, expiresIn: claimed.expires });
    expected = headerText(presigned.query?.["X-Amz-Signature"] as string | undefined);
  }
  const given = Buffer.from(claimed.signature, "hex");
  const wanted = Buffer.from(expected ?? "", "hex");
  if (given.length === 0 || given.length !== wanted.length || !timingSafeEqual(given, wanted))
    return "signature does not match";
  return undefined;
}
