import { creditTenths, fromTenths } from "../credits/ledger.js";
import type { JsonBody } from "../http/contract.js";
import { PLANS, isPlanId } from "./plans.js";
import type { AccountWithBalance } from "./service.js";

export type ProfileBody = JsonBody<"getProfile", 200>["data"];

/** The API's profile of an account. */
export function toProfile({ account, balance }: AccountWithBalance): ProfileBody {
  const plan = isPlanId(account.plan) ? account.plan : null;
  const subscribed =
    plan !== null && (account.subscriptionStatus === "active" || account.subscriptionStatus === "trialing");
  return {
    id: account.id,
    email: account.email,
    firstName: account.firstName,
    lastName: account.lastName,
    companyName: account.companyName,
    companyWebsite: account.companyWebsite,
    smbType: account.smbType as ProfileBody["smbType"],
    subscriptionPlan: plan,
    subscriptionStatus: account.subscriptionStatus as ProfileBody["subscriptionStatus"],
    isSubscribed: subscribed,
    freeLeadsUsed: account.freeLeadsUsed,
    onboardingCompleted: account.onboardingCompleted,
    targetCategories: account.targetCategories,
    targetLocations: account.targetLocations,
    monthlyCredits: fromTenths(balance.monthlyTenths),
    monthlyCreditsUsed: fromTenths(balance.monthlyUsedTenths),
    monthlyCreditsRemaining: fromTenths(balance.monthlyRemainingTenths),
    permanentCredits: fromTenths(balance.permanentTenths),
    totalCreditsRemaining: fromTenths(creditTenths(balance)),
    creditOverageRate: plan ? PLANS[plan].creditPriceCents : null,
    overageCreditsRemaining: fromTenths(balance.overageTenths),
  };
}
