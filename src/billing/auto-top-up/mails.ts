import type { DbOrTrx } from "../../db/database.js";
import { enqueueMail } from "../../mail/queue.js";

/**
 * The mail to the account owner when declined purchases turned the auto top-up off, queued in
 * the transaction that turns it off (sent only if it commits).
 */
export async function queueAutoTopUpDisabledMail(
  db: DbOrTrx,
  mail: { to: string; declines: number; credits: number; amountCents: number },
): Promise<void> {
  await enqueueMail(db, {
    to: mail.to,
    subject: "Auto top-up was turned off",
    text:
      `Your saved payment method was declined ${mail.declines} times in a row when we tried to buy ` +
      `${mail.credits} credits (${(mail.amountCents / 100).toFixed(2)} USD) for your automatic top-up, ` +
      "so the auto top-up is now off and no more purchases will be tried.\n\n" +
      "Nothing was charged for the declined attempts. Searches, exports and e-mail schedules keep " +
      "using your remaining credits and, if you set one, your overage budget.\n\n" +
      "To turn it back on, update the payment method with your bank or card issuer, then send " +
      "PATCH /api/v1/auto-top-up with the configuration you want.\n",
  });
}
