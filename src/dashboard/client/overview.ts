import { api, messageOf } from "./api.js";
import { el, messageBox, show } from "./dom.js";

function row(label: string, value: string): HTMLElement {
  return el("div", { class: "row" }, el("dt", {}, label), el("dd", {}, value));
}

/** The overview: plan, subscription status, credits. */
export async function overviewPage(email: string): Promise<void> {
  const box = messageBox();
  const { data, error, response } = await api.GET("/api/v1/me");
  if (!data) {
    box.say(messageOf(error, response), "error");
    show(el("h1", {}, "Overview"), el("p", {}, `Signed in as ${email}.`), box.node);
    return;
  }
  const me = data.data;
  show(
    el("h1", {}, "Overview"),
    el(
      "dl",
      { id: "overview" },
      row("Account", me.email),
      row("Company", me.companyName ?? "—"),
      row("Plan", me.subscriptionPlan ?? "none"),
      row("Status", me.subscriptionStatus),
      row("Monthly credits left", `${me.monthlyCreditsRemaining} of ${me.monthlyCredits}`),
      row("Permanent credits", String(me.permanentCredits)),
      row("Total credits left", String(me.totalCreditsRemaining)),
    ),
    box.node,
  );
}
