import type { DbOrTrx } from "../db/database.js";
import { enqueueMail } from "../mail/queue.js";

/**
 * The mail that hands over the API key after checkout, queued in the transaction that creates
 * the key (the key is in no answer and no log; it leaves only in this mail).
 */
export async function queueKeyMail(
  db: DbOrTrx,
  mail: { to: string; apiKey: string; plan: string; trialEndsAt: Date | null },
): Promise<void> {
  const trial = mail.trialEndsAt
    ? `Your 14-day trial ends on ${mail.trialEndsAt.toISOString()}; nothing is charged until then.\n\n`
    : "";
  await enqueueMail(db, {
    to: mail.to,
    subject: "Your API key",
    text:
      `Thank you for subscribing to the ${mail.plan} plan.\n\n` +
      `Your API key:\n\n${mail.apiKey}\n\n` +
      trial +
      "Send it as `Authorization: Bearer <key>` on every request. Keep it secret: do not put it in " +
      "client-side code or public repositories. It is shown only in this e-mail.\n",
  });
}

/**
 * The mail that lets the owner of an existing account confirm a purchase: the hosted checkout
 * link goes only to the address, never in the API answer.
 */
export async function queueConfirmMail(
  db: DbOrTrx,
  mail: { to: string; checkoutUrl: string; plan: string; expiresAt: Date },
): Promise<void> {
  await enqueueMail(db, {
    to: mail.to,
    subject: "Confirm your purchase",
    text:
      `Someone asked to buy the ${mail.plan} plan for this e-mail address, which already has an account.\n\n` +
      `To confirm the purchase, complete the checkout here (the link expires on ${mail.expiresAt.toISOString()}):\n\n` +
      `${mail.checkoutUrl}\n\nIf it was not you, ignore this e-mail: nothing is charged.\n`,
  });
}
