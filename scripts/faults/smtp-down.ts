import { sql } from "kysely";
import { sleep, startService, type ScenarioResult } from "./harness.js";
import { checkout, startPayments } from "./purchases.js";
import { TcpProxy } from "./tcp-proxy.js";

// Scenario 5 (issue 36): the SMTP relay down for a minute. The service reaches the tests' local
// SMTP server through a TCP proxy, cut (connections refused) while subscriptions are bought: each
// purchase queues the "Your API key" mail. After 60 s the relay is back: every mail arrives,
// retried with graphile-worker's backoff, none is lost and none arrives twice.

const BUYERS = 5;
const DOWN_MS = 60_000;

export async function smtpDown(): Promise<ScenarioResult> {
  const payments = await startPayments();
  const relay = new URL(payments.smtp.url);
  const proxy = new TcpProxy({ host: relay.hostname, port: Number(relay.port) });
  await proxy.start();
  const service = await startService({
    leads: 0,
    env: { ...payments.env, SMTP_URL: `smtp://127.0.0.1:${proxy.port}` },
  });
  try {
    await proxy.cut();
    const downSince = Date.now();
    const emails: string[] = [];
    for (let i = 0; i < BUYERS; i += 1) emails.push((await checkout(service, payments, 100 + i)).email);
    await sleep(Math.max(0, downSince + DOWN_MS - Date.now()));
    const receivedWhileDown = payments.smtp.messages.length;
    await proxy.restore();
    const restored = Date.now();
    const isKeyMail = (to: string[]) => (m: { to: string[]; subject: string }) =>
      m.subject === "Your API key" && m.to.some((address) => to.includes(address));
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline && emails.some((e) => !payments.smtp.messages.some(isKeyMail([e]))))
      await sleep(500);
    const arrivedAfterMs = Date.now() - restored;
    // Time for a second copy to show up, if one were sent.
    await sleep(5_000);
    const copies = emails.map((e) => payments.smtp.messages.filter(isKeyMail([e])).length);
    const received = copies.filter((n) => n > 0).length;
    const duplicates = copies.reduce((sum, n) => sum + Math.max(0, n - 1), 0);
    const queued = await sql<{ n: number }>`
      select count(*)::int as n from graphile_worker.jobs where task_identifier = 'mail__send'`.execute(
      service.db,
    );
    const failures: string[] = [];
    if (receivedWhileDown) failures.push(`${receivedWhileDown} mails arrived while the relay was down`);
    if (received < BUYERS) failures.push(`${BUYERS - received} mails lost`);
    if (duplicates) failures.push(`${duplicates} mails sent twice`);
    if (Number(queued.rows[0]!.n)) failures.push(`${queued.rows[0]!.n} mail jobs still queued`);
    return {
      name: "smtp-down",
      figures: {
        downSeconds: DOWN_MS / 1000,
        sent: BUYERS,
        received,
        duplicates,
        lost: BUYERS - received,
        deliveredSecondsAfterRestore: Math.round(arrivedAfterMs / 1000),
      },
      failures,
    };
  } finally {
    await service.close();
    await proxy.cut();
    await payments.close();
  }
}
