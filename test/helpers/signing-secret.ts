/** The signing secret of test apps and test worker processes (signed links must verify across them). */
export const TEST_SIGNING_SECRET = "test-signing-secret";
