import { afterEach, expect } from "vitest";
import { contractViolations } from "../src/http/contract-violations.js";

// Every answer of every test is checked against openapi.yaml (response validation is on in
// tests): a test fails when the service answered something the contract does not describe.
afterEach(() => {
  const found = contractViolations.splice(0);
  expect(found, "answers that do not match openapi.yaml").toEqual([]);
});
