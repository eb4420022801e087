/** Answers that did not match openapi.yaml (collected when response validation is on). */
export const contractViolations: { method: string; path: string; status: number; message: string }[] = [];
