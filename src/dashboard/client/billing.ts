import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el, messageBox, show } from "./dom.js";
import { dollars, when } from "./format.js";
import { idempotencyKey } from "./progress.js";

type Profile = components["schemas"]["Profile"];
type Overage = components["schemas"]["OverageBudget"];
type Plan = components["schemas"]["Plan"];
type BudgetType = components["schemas"]["OverageBudgetType"];

const PLANS: readonly Plan[] = ["starter", "growth", "scale", "platinum", "enterprise"];

function row(label: string, value: string): HTMLElement {
  return el("div", { class: "row" }, el("dt", {}, label), el("dd", {}, value));
}

/** A titled panel with its own message region (answers are shown beside the action). */
function panel(id: string, title: string, ...children: (Node | string)[]) {
  const box = messageBox();
  box.node.id = `${id}-message`;
  const node = el(
    "section",
    { id, class: "panel", "aria-labelledby": `${id}-title` },
    el("h2", { id: `${id}-title` }, title),
    ...children,
    box.node,
  );
  return { node, say: box.say };
}

/** Runs a form's action with its buttons disabled, so a double click cannot send it twice. */
function onSubmit(form: HTMLFormElement, action: () => Promise<void>): void {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const buttons = [...form.querySelectorAll("button")];
    for (const b of buttons) b.disabled = true;
    void action().finally(() => {
      for (const b of buttons) b.disabled = false;
    });
  });
}

function describeOverage(o: Overage): string {
  if (!o.enabled || o.budgetAmount === null) return "Off: lead usage stops at a zero balance.";
  const amount = o.budgetType === "dollars" ? `$${o.budgetAmount}` : `${o.budgetAmount} credits`;
  const remaining = o.remainingCredits === null ? "" : `, ${o.remainingCredits} left`;
  return `Up to ${amount} per billing cycle (${o.budgetCredits ?? 0} credits): ${o.usedCredits} used${remaining}; ${dollars(o.accruedCents)} not collected yet.`;
}

/**
 * The billing page: the plan and balance, buying credits, the overage budget (set or turn off),
 * changing the plan and cancelling. Every call's error is shown as the API's message, including
 * 503 `payment_unavailable` when this deployment has no payment processor.
 */
export async function billingPage(): Promise<void> {
  const top = messageBox();
  const summary = el("dl", { id: "billing-summary" }, row("Plan", "Loading…"));

  const count = el("input", {
    id: "credit-count",
    name: "creditCount",
    type: "number",
    min: "100",
    step: "1",
    value: "100",
    required: true,
  });
  const buyForm = el(
    "form",
    { id: "buy-credits" },
    el("label", { for: "credit-count" }, "Credits to buy (at least 100)"),
    count,
    el("button", { type: "submit" }, "Buy credits"),
  );
  const buy = panel(
    "credits-panel",
    "Buy credits",
    el(
      "p",
      {},
      "Charged now to your saved card at your plan's price per credit. Bought credits do not expire with the billing cycle.",
    ),
    buyForm,
  );

  const overageState = el("p", { id: "overage-state" }, "Loading…");
  const budgetType = el(
    "select",
    { id: "overage-type", name: "budgetType" },
    el("option", { value: "dollars" }, "dollars"),
    el("option", { value: "credits" }, "credits"),
  );
  const budgetAmount = el("input", {
    id: "overage-amount",
    name: "budgetAmount",
    type: "number",
    min: "1",
    step: "1",
    required: true,
  });
  const overageOff = el("button", { type: "button", id: "overage-off" }, "Turn overage off");
  const overageForm = el(
    "form",
    { id: "overage-form" },
    el("label", { for: "overage-amount" }, "Budget per billing cycle"),
    budgetAmount,
    el("label", { for: "overage-type" }, "in"),
    budgetType,
    el("button", { type: "submit" }, "Set budget"),
    overageOff,
  );
  const overage = panel("overage-panel", "Overage budget", overageState, overageForm);

  const targetPlan = el(
    "select",
    { id: "target-plan", name: "targetPlan" },
    ...PLANS.map((p) => el("option", { value: p }, p)),
  );
  const mode = el(
    "select",
    { id: "plan-mode", name: "mode" },
    el("option", { value: "switch_trial" }, "stay in the trial"),
    el("option", { value: "activate_now" }, "end the trial and pay now"),
  );
  const modeField = el(
    "span",
    { class: "check", hidden: true },
    el("label", { for: "plan-mode" }, "During the trial"),
    mode,
  );
  const planForm = el(
    "form",
    { id: "change-plan" },
    el("label", { for: "target-plan" }, "New plan"),
    targetPlan,
    modeField,
    el("button", { type: "submit" }, "Change plan"),
  );
  const plan = panel(
    "plan-panel",
    "Change plan",
    el(
      "p",
      {},
      "An upgrade applies now (the difference for the rest of the period is charged); a downgrade applies at renewal.",
    ),
    planForm,
  );

  const cancelButton = el("button", { type: "button", id: "cancel-subscription" }, "Cancel the subscription");
  const cancel = panel(
    "cancel-panel",
    "Cancel",
    el(
      "p",
      {},
      "The subscription ends at the end of the current period; the remaining balance is forfeited then.",
    ),
    cancelButton,
  );

  show(el("h1", {}, "Billing"), top.node, summary, buy.node, overage.node, plan.node, cancel.node);

  let profile: Profile | undefined;
  async function refreshSummary(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/me");
    if (!data) return top.say(messageOf(error, response), "error");
    profile = data.data;
    summary.replaceChildren(
      row("Plan", profile.subscriptionPlan ?? "none"),
      row("Status", profile.subscriptionStatus),
      row("Monthly credits left", `${profile.monthlyCreditsRemaining} of ${profile.monthlyCredits}`),
      row("Bought credits", String(profile.permanentCredits)),
      row("Total credits left", String(profile.totalCreditsRemaining)),
    );
    modeField.hidden = profile.subscriptionStatus !== "trialing";
    const current = profile.subscriptionPlan;
    if (current) targetPlan.value = PLANS.find((p) => p !== current) ?? current;
  }

  async function refreshOverage(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/overage-budget");
    if (!data) return overage.say(messageOf(error, response), "error");
    const o = data.data;
    overageState.textContent = describeOverage(o);
    budgetType.value = o.budgetType;
    budgetAmount.value = o.budgetAmount === null ? "" : String(o.budgetAmount);
    overageOff.disabled = !o.enabled;
    const limits =
      o.maxBudgetDollars === null ? "" : ` At most $${o.maxBudgetDollars} or ${o.maxBudgetCredits} credits.`;
    overageState.append(document.createTextNode(limits));
    if (o.periodEnd) overageState.append(document.createTextNode(` Resets ${when(o.periodEnd)}.`));
  }

  onSubmit(buyForm, async () => {
    const { data, error, response } = await api.POST("/api/v1/purchase-credits", {
      params: { header: { "Idempotency-Key": idempotencyKey() } },
      body: { creditCount: Number(count.value) },
    });
    if (!data) return buy.say(messageOf(error, response), "error");
    const p = data.data;
    buy.say(`${p.message} ${p.totalCreditsRemaining} credits left in all.`);
    await refreshSummary();
  });

  async function updateOverage(body: components["schemas"]["OverageBudgetUpdate"], done: string) {
    const { data, error, response } = await api.PATCH("/api/v1/overage-budget", { body });
    if (!data) return overage.say(messageOf(error, response), "error");
    overage.say(done);
    await refreshOverage();
  }

  onSubmit(overageForm, () =>
    updateOverage(
      { enabled: true, budgetType: budgetType.value as BudgetType, budgetAmount: Number(budgetAmount.value) },
      "Overage budget saved.",
    ),
  );
  overageOff.addEventListener("click", () => void updateOverage({ enabled: false }, "Overage turned off."));

  onSubmit(planForm, async () => {
    const trial = profile?.subscriptionStatus === "trialing";
    const { data, error, response } = await api.POST("/api/v1/subscription/change-plan", {
      body: {
        targetPlan: targetPlan.value,
        ...(trial ? { mode: mode.value as components["schemas"]["PlanChangeMode"] } : {}),
      },
    });
    if (!data) return plan.say(messageOf(error, response), "error");
    const change = data.data;
    const charged = change.amountChargedCents > 0 ? ` Charged ${dollars(change.amountChargedCents)}.` : "";
    plan.say(`${change.message}${charged} Effective ${when(change.effectiveAt)}.`);
    await Promise.all([refreshSummary(), refreshOverage()]);
  });

  cancelButton.addEventListener("click", () => {
    if (!window.confirm("Cancel the subscription at the end of the period?")) return;
    void (async () => {
      const { data, error, response } = await api.POST("/api/v1/subscription/cancel");
      if (!data) return cancel.say(messageOf(error, response), "error");
      cancel.say(
        `${data.data.message} Access ends ${when(data.data.currentPeriodEnd, "at the period's end")}.`,
      );
      await refreshSummary();
    })();
  });

  await Promise.all([refreshSummary(), refreshOverage()]);
}
