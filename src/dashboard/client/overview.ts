import { api, messageOf } from "./api.js";
import { el, messageBox, show } from "./dom.js";

function row(label: string, value: string): HTMLElement {
  return el("div", { class: "row" }, el("dt", {}, label), el("dd", {}, value));
}

/** The subscription's state in words; a trial says what it gives (the document's 14 days, half the credits). */
function statusText(status: string): string {
  if (status === "trialing") return "trial (14 days, half the plan's monthly credits; charged when it ends)";
  return status.replace(/_/g, " ");
}

/**
 * The overview: plan, subscription status and trial, credits, and usage (leads received and files
 * exported, from the lead export history and the export history). The heading is drawn at once;
 * the figures fill in as their calls answer.
 */
export async function overviewPage(email: string): Promise<void> {
  const box = messageBox();
  const account = el("dl", { id: "overview", "aria-busy": "true" }, row("Account", email));
  const usage = el("dl", { id: "usage", "aria-busy": "true" });
  show(el("h1", {}, "Overview"), account, el("h2", {}, "Usage"), usage, box.node);
  const me = profileCall();
  await Promise.all([drawAccount(account, box, me), drawUsage(usage, box, me)]);
}

/** The profile call, shared by the account and usage lists. */
const profileCall = () => api.GET("/api/v1/me");
type ProfileCall = ReturnType<typeof profileCall>;

async function drawAccount(
  target: HTMLElement,
  box: ReturnType<typeof messageBox>,
  profile: ProfileCall,
): Promise<void> {
  const { data, error, response } = await profile;
  target.removeAttribute("aria-busy");
  if (!data) return box.say(messageOf(error, response), "error");
  const me = data.data;
  target.replaceChildren(
    row("Account", me.email),
    row("Company", me.companyName ?? "—"),
    row("Plan", me.subscriptionPlan ?? "none"),
    row("Status", statusText(me.subscriptionStatus)),
    row("Monthly credits left", `${me.monthlyCreditsRemaining} of ${me.monthlyCredits}`),
    row("Permanent credits", String(me.permanentCredits)),
    row("Total credits left", String(me.totalCreditsRemaining)),
    row("Overage credits left", String(me.overageCreditsRemaining)),
  );
}

async function drawUsage(
  target: HTMLElement,
  box: ReturnType<typeof messageBox>,
  profile: ProfileCall,
): Promise<void> {
  const [me, leads, files] = await Promise.all([
    profile,
    api.GET("/api/v1/lead-export-history", { params: { query: { limit: 1 } } }),
    api.GET("/api/v1/export-history", { params: { query: { limit: 1 } } }),
  ]);
  target.removeAttribute("aria-busy");
  // The profile's own failure is said once, by drawAccount.
  if (!me.data) return;
  const failed = [leads, files].find((r) => !r.data);
  if (failed) return box.say(messageOf(failed.error, failed.response), "error");
  target.replaceChildren(
    row("Credits used this cycle", String(me.data!.data.monthlyCreditsUsed)),
    row("Leads received", String(leads.data!.totalCount)),
    row("Files exported (kept 90 days)", String(files.data!.totalCount)),
  );
}
