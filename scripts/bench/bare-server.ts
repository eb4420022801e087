import express from "express";

// The baseline of the GET /me benchmark: a bare Express handler answering a fixed JSON body of
// the same size, with no auth, no database, no rate limit and no validation.
const app = express();
const body = {
  data: {
    id: 1,
    email: "bench@example.com",
    firstName: null,
    lastName: null,
    companyName: null,
    companyWebsite: null,
    smbType: "other",
    subscriptionPlan: "growth",
    subscriptionStatus: "active",
    isSubscribed: true,
    freeLeadsUsed: 0,
    onboardingCompleted: false,
    targetCategories: [],
    targetLocations: [],
    monthlyCredits: 2000,
    monthlyCreditsUsed: 0,
    monthlyCreditsRemaining: 2000,
    permanentCredits: 0,
    totalCreditsRemaining: 2000,
    creditOverageRate: 7.5,
  },
};
app.get("/api/v1/me", (_req, res) => {
  res.json(body);
});
const server = app.listen(Number(process.env.PORT), "127.0.0.1", () => process.send?.("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
