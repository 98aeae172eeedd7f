// A presale: section F is set aside for channel fanclub. A buyer who asks for a seat of F without
// a code is REJECTED with the reason and the suggestion its code `channel_seats` calls for; a
// mistyped code is refused on the form at once; with the right code the seat is HELD. Prints
// PRESALE_JOB= for the Rust test.
import { assert, env, jobStatus, nameBuyer, scenario, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');
const code = env('SEATCLAIM_CODE');

/** @typedef {import('playwright-core').Page} Page */

/**
 * Asks for one seat of section F with `typed` as the presale code, and sends it.
 * @param {Page} page @param {string} typed
 */
async function askSectionF(page, typed) {
  await page.locator('[data-field="section"]').selectOption('F');
  await page.locator('[data-field="quantity"]').fill('1');
  await page.locator('[data-field="access_code"]').fill(typed);
  await page.locator('[data-action="reserve"]').click();
}

await scenario('presale: a code opens the channel\'s seats', async ({ open }) => {
  const page = await open(`/events/${event}`);
  await nameBuyer(page, 'fan');
  await askSectionF(page, '');
  await jobStatus(page, 'REJECTED');
  const reason = page.locator('[data-job-reason]');
  assert((await reason.getAttribute('data-reason-code')) === 'channel_seats', 'the reason\'s code');
  const next = ((await page.locator('[data-reason-next]').textContent()) ?? '').trim();
  assert(next.includes('presale code'), `the suggestion after channel_seats: ${JSON.stringify(next)}`);

  await until('the form back beside the rejection', () => page.locator('[data-action="reserve"]').isVisible());
  await askSectionF(page, 'WRONG-CODE');
  const error = page.locator('[data-form-error]');
  await until('the wrong code refused on the form', async () => ((await error.textContent()) ?? '').includes('access code'));

  await askSectionF(page, code);
  await jobStatus(page, 'HELD');
  const id = await page.locator('[data-job-status]').getAttribute('data-job-id');
  console.log(`PRESALE_JOB=${id}`);
});
