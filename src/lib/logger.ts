import { pino, type Logger } from "pino";

/** Header and field names whose values are never written to logs. */
export const REDACTED_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'req.headers["x-svc-api-key"]',
  'req.headers["stripe-signature"]',
  "apiKey",
  "signingSecret",
  "password",
  "*.apiKey",
  "*.signingSecret",
  "secretAccessKey",
  "sessionToken",
  "*.secretAccessKey",
  "*.sessionToken",
];

/** The process logger: JSON lines on stdout, secrets redacted. */
export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } });
}
