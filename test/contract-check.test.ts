import { describe, expect, it } from "vitest";
import { contractViolations } from "../src/http/contract-violations.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

const t = useTestApp();

describe("response validation against openapi.yaml", () => {
  it("records an answer that breaks the contract", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    await t.ctx.db
      .updateTable("accounts")
      .set({ smb_type: "not-a-database" })
      .where("id", "=", accountId)
      .execute();
    await t.request().get("/api/v1/me").set(auth);
    const found = contractViolations.splice(0);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ method: "GET", path: "/api/v1/me" });
  });
});
