// Opening: a sale that starts a few seconds after the event is created (SEATCLAIM_OPENS_AT). The
// page counts down to the start; the buyer reserves before it and sees the reservation wait in
// the line for the opening, with no place yet (places are drawn at the start); the same buyer
// reserving again from another browser is told they already wait and follows that same job;
// after the start the reservation is decided HELD without a reload, and the countdown is gone.
import { api, assert, env, jobStatus, nameBuyer, scenario, until, WAIT_MS } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');
const opensAt = Date.parse(env('SEATCLAIM_OPENS_AT'));

/**
 * The countdown to the opening in seconds ("1:05" is 65, "42 s" is 42), or NaN.
 * @param {import('playwright-core').Page} page
 */
async function opensIn(page) {
  const text = ((await page.locator('[data-opening-countdown]').textContent()) ?? '').trim();
  const seconds = /^(\d+) s$/.exec(text);
  if (seconds) return Number(seconds[1]);
  const clock = /^(?:(\d+):)?(\d+):(\d\d)$/.exec(text);
  return clock ? Number(clock[1] ?? 0) * 3600 + Number(clock[2]) * 60 + Number(clock[3]) : NaN;
}

/**
 * Reserves any one seat of section O as `buyer`.
 * @param {import('playwright-core').Page} page @param {string} buyer
 */
async function reserveOne(page, buyer) {
  await nameBuyer(page, buyer);
  await page.locator('[data-field="section"]').selectOption('O');
  await page.locator('[data-field="quantity"]').fill('1');
  await page.locator('[data-action="reserve"]').click();
}

/**
 * Waits until `page` shows its reservation in the line for the opening, and no place in line.
 * @param {import('playwright-core').Page} page
 */
async function inLineForTheOpening(page) {
  const row = page.locator('[data-prequeue-row]');
  await until('the reservation in the line for the opening', async () =>
    (await row.isVisible()) && ((await row.textContent()) ?? '').includes('In the line for the opening'));
  assert(await page.locator('[data-queue-row]').isHidden(), 'a place in line shown before the draw');
}

await scenario('opening: in the line before the start, then held', async ({ open }) => {
  const tooLate = 'the browser came up after the sale started: start it later (SEATCLAIM_OPENS_AT)';
  assert(Date.now() < opensAt, tooLate);
  const page = await open(`/events/${event}`);
  const row = page.locator('[data-opening-row]');
  const left = await until('the countdown to the opening', async () => {
    const seconds = await opensIn(page);
    return (await row.isVisible()) && seconds > 0 && seconds;
  });
  // It counts to the start: the page, the app and this script share the machine's clock.
  const expected = (opensAt - Date.now()) / 1000;
  assert(Math.abs(left - expected) <= 2, `the countdown read ${left} s, ${expected.toFixed(1)} s before the start`);
  assert(Date.now() < opensAt - 1000, tooLate);

  await reserveOne(page, 'olga');
  await inLineForTheOpening(page);
  await jobStatus(page, 'PENDING');
  const job = await page.locator('[data-job-status]').getAttribute('data-job-id');
  assert(job, 'no job id on the page');

  // The same buyer in another browser (its own storage): one reservation per buyer before the
  // opening, so that page is told so (409 already-queued) and follows the first job.
  const other = await open(`/events/${event}`);
  assert(Date.now() < opensAt - 1000, tooLate);
  await reserveOne(other, 'olga');
  await until('the other page to follow the same job', async () =>
    (await other.locator('[data-job-status]').getAttribute('data-job-id')) === job);
  await inLineForTheOpening(other);
  const why = (await other.locator('[data-job-note]').textContent()) ?? '';
  assert(why.includes('already waits in the line') && why.includes(job),
    `the other page does not say why it follows job ${job}: ${JSON.stringify(why)}`);

  // Still counting, second by second, unless the start came meanwhile.
  const now = await opensIn(page);
  await until('the countdown to tick', async () => (await opensIn(page)) < now || row.isHidden(), 2500);

  // An opening reads every shard of its pre-queue and late list first (512 queries on AWS),
  // which a loaded emulator takes its time over: three times the usual wait after the start.
  await jobStatus(page, 'HELD', Math.max(0, opensAt - Date.now()) + 3 * WAIT_MS);
  await until('the countdown gone after the start', () => row.isHidden());
  assert(await page.locator('[data-prequeue-row]').isHidden(), 'still in the line for the opening once held');
  assert(await page.locator('[data-queue-row]').isHidden(), 'a place in line once held');
  await jobStatus(other, 'HELD');
  await until('the other page to stop saying why it follows the job', () =>
    other.locator('[data-job-note]').isHidden());

  const { body } = await api(`/v1/jobs/${job}`);
  assert(body.status === 'HELD' && body.buyer_id === 'olga' && body.seat_ids.length === 1,
    `the API says ${JSON.stringify(body)}`);
  console.log(`JOB_ID=${job}`);
});
