// Seats together: a buyer ticks "Seats together" and asks for 3 seats of section A (a row of 6);
// the hold is 3 adjacent seats of one row, and exactly those are ringed as theirs on the map.
// Another buyer asks for 4 together, more than the row has left, and is REJECTED with the reason; the
// form is back beside the rejection at once, so they pick a seat on the map and reserve it,
// without "New reservation", under a new Idempotency-Key, and it is HELD. Prints
// TOGETHER_JOB=, REJECTED_JOB= and SINGLE_JOB= for the Rust test.
import { api, assert, env, jobStatus, nameBuyer, scenario, seatState, select, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');

/** @typedef {import('playwright-core').Page} Page */

/**
 * Records the reservation POSTs `page` sends: their Idempotency-Key and body.
 * @param {Page} page
 */
function recordPosts(page) {
  /** @type {{key: string | undefined, body: any}[]} */
  const posts = [];
  page.on('request', (request) => {
    if (request.method() !== 'POST' || !request.url().endsWith(`/v1/events/${event}/reservations`)) return;
    posts.push({ key: request.headers()['idempotency-key'], body: JSON.parse(request.postData() ?? 'null') });
  });
  return posts;
}

/**
 * Asks for `quantity` seats of section A, together or not, and sends it.
 * @param {Page} page @param {number} quantity @param {boolean} together
 */
async function askSectionA(page, quantity, together) {
  await page.locator('[data-field="section"]').selectOption('A');
  await page.locator('[data-field="quantity"]').fill(String(quantity));
  await page.locator('[data-field="together"]').setChecked(together);
  await page.locator('[data-action="reserve"]').click();
}

/** The seats ringed as the buyer's on the map. @param {Page} page */
const ringed = (page) => page.locator('[data-seat-map] [data-seat-id].mine')
  .evaluateAll((seats) => seats.map((seat) => seat.getAttribute('data-seat-id') ?? '').sort());

/**
 * Waits until exactly `ids` are ringed on `page`'s map.
 * @param {Page} page @param {string[]} ids
 */
async function ringedExactly(page, ids) {
  const wanted = JSON.stringify([...ids].sort());
  await until(`exactly ${wanted} ringed as the buyer's`, async () => JSON.stringify(await ringed(page)) === wanted);
}

/** The job the page shows, as the API has it. @param {Page} page */
async function shownJob(page) {
  const id = await page.locator('[data-job-status]').getAttribute('data-job-id');
  assert(id, 'no job id on the page');
  const { status, body } = await api(`/v1/jobs/${id}`);
  assert(status === 200, `reading job ${id} answered ${status}`);
  return body;
}

await scenario('together: a block of adjacent seats, and a new try straight after a rejection', async ({ open }) => {
  const tess = await open(`/events/${event}`);
  const tessPosts = recordPosts(tess);
  await nameBuyer(tess, 'tess');
  await askSectionA(tess, 3, true);
  await jobStatus(tess, 'HELD');
  const sent = tessPosts[0]?.body;
  assert(tessPosts.length === 1 && sent.section === 'A' && sent.quantity === 3 && sent.together === true && !('seat_ids' in sent),
    `the page sent ${JSON.stringify(tessPosts)}`);
  const block = await shownJob(tess);
  const places = (block.seat_ids ?? []).map((/** @type {string} */ id) => /^A-(\d+)-(\d+)$/.exec(id)).filter(Boolean);
  assert(places.length === 3, `the hold is not 3 seats of A: ${JSON.stringify(block)}`);
  const numbers = places.map((/** @type {RegExpExecArray} */ m) => Number(m[2])).sort((a, b) => a - b);
  assert(places.every((/** @type {RegExpExecArray} */ m) => m[1] === places[0][1]), `the seats are not in one row: ${block.seat_ids}`);
  assert(numbers[1] === numbers[0] + 1 && numbers[2] === numbers[0] + 2, `the seats are not side by side: ${block.seat_ids}`);
  await ringedExactly(tess, block.seat_ids);
  for (const id of block.seat_ids) await seatState(tess, id, 'HELD');
  const label = await tess.locator(`[data-seat-id="${block.seat_ids[0]}"]`).getAttribute('aria-label');
  assert(label?.endsWith('held for you'), `the held seat reads ${JSON.stringify(label)}`);
  assert(((await tess.locator('[data-job-seats]').textContent()) ?? '').includes(block.seat_ids.join(', ')),
    'the panel does not name the held seats');

  const uma = await open(`/events/${event}`);
  const umaPosts = recordPosts(uma);
  await nameBuyer(uma, 'uma');
  await askSectionA(uma, 4, true);
  await jobStatus(uma, 'REJECTED');
  const rejected = await shownJob(uma);
  const reason = ((await uma.locator('[data-job-reason]').textContent()) ?? '').trim();
  assert(reason === 'no 4 adjacent seats in section A' && reason === rejected.reason, `the reason shown: ${JSON.stringify(reason)}`);
  // The page chose what to suggest by the code, not by the text.
  const code = await uma.locator('[data-job-reason]').getAttribute('data-reason-code');
  assert(code === 'no_adjacent_seats' && code === rejected.reason_code, `the reason's code: ${code}`);
  const next = ((await uma.locator('[data-reason-next]').textContent()) ?? '').trim();
  assert(next.includes('fewer seats together'), `the suggestion after no_adjacent_seats: ${JSON.stringify(next)}`);
  // The form is back beside the rejection: nothing to press before trying again.
  await until('the form back beside the rejection', () => uma.locator('[data-action="reserve"]').isVisible());
  assert(await uma.locator('[data-job-reason]').isVisible(), 'the reason went when the form came back');
  assert(await uma.locator('[data-action="new"]').isHidden(), '"New reservation" is still asked for');
  assert((await ringed(uma)).length === 0, `a rejected reservation rings seats: ${await ringed(uma)}`);

  // Any seat still free, picked on the map (which the rejection left unlocked).
  const free = await until('a seat still available', () =>
    uma.locator('[data-seat-map] [data-seat-id][data-state="AVAILABLE"]').first().getAttribute('data-seat-id'));
  await select(uma, [free]);
  await uma.locator('[data-action="reserve"]').click();
  await jobStatus(uma, 'HELD');
  const single = await shownJob(uma);
  assert(single.job_id !== rejected.job_id && JSON.stringify(single.seat_ids) === JSON.stringify([free]),
    `the new try is ${JSON.stringify(single)}, after ${rejected.job_id}`);
  await ringedExactly(uma, [free]);
  assert(umaPosts.length === 2 && umaPosts[0].key !== umaPosts[1].key,
    `the new try did not get a key of its own: ${JSON.stringify(umaPosts)}`);
  const retry = umaPosts[1].body;
  assert(JSON.stringify(retry.seat_ids) === JSON.stringify([free]) && !('together' in retry) && !('section' in retry),
    `the new try sent ${JSON.stringify(retry)}`);
  // The other buyer's block is still theirs, ringed on their page and not on this one.
  await ringedExactly(tess, block.seat_ids);

  console.log(`TOGETHER_JOB=${block.job_id}`);
  console.log(`REJECTED_JOB=${rejected.job_id}`);
  console.log(`SINGLE_JOB=${single.job_id}`);
});
