/** A subscription plan as sold. */
export interface PlanInfo {
  id: PlanId;
  monthlyCredits: number;
  /** Price of one purchased or overage credit, in US cents. */
  creditPriceCents: number;
  /** Whether a new subscription starts with a 14-day trial by default. */
  trialEligible: boolean;
}

export const PLAN_IDS = ["starter", "growth", "scale", "platinum", "enterprise"] as const;
export type PlanId = (typeof PLAN_IDS)[number];

export const PLANS: Record<PlanId, PlanInfo> = {
  starter: { id: "starter", monthlyCredits: 500, creditPriceCents: 10, trialEligible: true },
  growth: { id: "growth", monthlyCredits: 2_000, creditPriceCents: 7.5, trialEligible: true },
  scale: { id: "scale", monthlyCredits: 10_000, creditPriceCents: 5, trialEligible: true },
  platinum: { id: "platinum", monthlyCredits: 100_000, creditPriceCents: 3, trialEligible: false },
  enterprise: { id: "enterprise", monthlyCredits: 250_000, creditPriceCents: 2, trialEligible: false },
};

export function isPlanId(value: unknown): value is PlanId {
  return typeof value === "string" && (PLAN_IDS as readonly string[]).includes(value);
}

/** Monthly credits granted for a plan: half during a trial. */
export function monthlyGrant(plan: PlanId, trialing: boolean): number {
  const credits = PLANS[plan].monthlyCredits;
  return trialing ? Math.floor(credits / 2) : credits;
}
