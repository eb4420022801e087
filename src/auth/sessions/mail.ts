import type { MailMessage } from "../../mail/message.js";

/** The sign-in mail: the one-time link, how long it lasts, and what to do when it was not asked for. */
export function signInMail(to: string, link: string): MailMessage {
  return {
    to,
    subject: "Your sign-in link",
    text: [
      "Open this link to sign in to the dashboard:",
      "",
      link,
      "",
      "It works once and for 15 minutes. If you did not ask for it, ignore this mail: nobody can sign in without it.",
    ].join("\n"),
  };
}
