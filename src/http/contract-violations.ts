/** An answer that does not match openapi.yaml. */
export interface ContractViolation {
  method: string;
  path: string;
  status: number;
  message: string;
}

/**
 * Answers that did not match openapi.yaml, collected when response validation is on (tests): the
 * test setup fails a test that left any here.
 */
export const contractViolations: ContractViolation[] = [];
