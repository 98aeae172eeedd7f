// Pictures of the page's main states for docs/screenshots/ (the event list, a seat map with a
// selection, a hold counting down, a purchase, a rejection, and a phone's view). Run by
// tests/tests/browser.rs when SEATCLAIM_SCREENSHOTS=1; SEATCLAIM_EVENT names an event with
// sections A (4 rows of 10) and B.
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { api, assert, countdown, env, jobStatus, nameBuyer, scenario, seatState, select, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');
const folder = process.env.SEATCLAIM_SCREENSHOTS_DIR ?? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

/** Reserves seats as another buyer through the API, and waits for the job's decision. @param {string} buyer @param {string[]} seats */
async function reserveAs(buyer, seats) {
  const { status, body } = await api(`/v1/events/${event}/reservations`, {
    method: 'POST', headers: { 'Idempotency-Key': `${buyer}-${seats.join(',')}` }, body: { buyer_id: buyer, seat_ids: seats },
  });
  assert(status === 202, `reserving ${seats} answered ${status} ${JSON.stringify(body)}`);
  const job = await until(`job ${body.job_id} to be decided`, async () => {
    const reply = await api(`/v1/jobs/${body.job_id}?wait=10`);
    return reply.body.status !== 'PENDING' && reply.body;
  });
  assert(job.status === 'HELD', `another buyer's job is ${job.status}`);
  return job.job_id;
}

await scenario('screenshots of the main states', async ({ browser }) => {
  await mkdir(folder, { recursive: true });
  // Someone else has bought and holds some seats, so the map shows every state.
  const sold = await reserveAs('others', ['A-1-5', 'A-1-6', 'A-2-5', 'A-2-6']);
  assert((await api(`/v1/jobs/${sold}/confirm`, { method: 'POST' })).status === 200, 'confirming a job failed');
  await reserveAs('others', ['B-1-1', 'B-1-2', 'B-1-3']);

  const desktop = await (await browser.newContext({ viewport: { width: 1100, height: 720 } })).newPage();
  const shot = (/** @type {import('playwright-core').Page} */ page, /** @type {string} */ name, fullPage = false) =>
    page.screenshot({ path: `${folder}/${name}.png`, fullPage });
  await desktop.goto(`${env('SEATCLAIM_URL')}/`);
  await desktop.locator(`[data-event-id="${event}"]`).waitFor();
  await shot(desktop, 'event-list');

  await desktop.locator(`[data-event-id="${event}"]`).click();
  await nameBuyer(desktop, 'alice');
  await seatState(desktop, 'B-1-1', 'HELD');
  await select(desktop, ['A-3-4', 'A-3-5']);
  await desktop.locator('[data-seat-id="A-3-5"]').blur();
  await shot(desktop, 'seat-map-selection');

  await desktop.locator('[data-action="reserve"]').click();
  await jobStatus(desktop, 'HELD');
  await until('a countdown', async () => (await countdown(desktop)) > 0);
  await shot(desktop, 'held-countdown');

  await desktop.locator('[data-action="confirm"]').click();
  await jobStatus(desktop, 'SOLD');
  await seatState(desktop, 'A-3-4', 'SOLD');
  await shot(desktop, 'sold');

  const late = await (await browser.newContext({ viewport: { width: 1100, height: 720 } })).newPage();
  await late.goto(`${env('SEATCLAIM_URL')}/events/${event}`);
  await nameBuyer(late, 'bob');
  await select(late, ['A-4-1', 'A-4-2']);
  await reserveAs('others', ['A-4-1']);
  await late.locator('[data-action="reserve"]').click();
  await jobStatus(late, 'REJECTED');
  await seatState(late, 'A-4-1', 'HELD');
  await shot(late, 'rejected');

  const phone = await (await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })).newPage();
  await phone.goto(`${env('SEATCLAIM_URL')}/events/${event}`);
  await nameBuyer(phone, 'pat');
  await select(phone, ['A-2-2']);
  await shot(phone, 'phone', true);
  console.log(`screenshots in ${folder}`);
});
