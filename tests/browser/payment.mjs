// Payment: a priced hold shows what there is to pay, and the buy button does not sell it where a
// payment provider confirms (402, shown as a note); the hold stays until the payment comes.
import { assert, env, jobStatus, nameBuyer, scenario, select, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');

await scenario('payment: a priced hold waits for its payment', async ({ open }) => {
  const page = await open(`/events/${event}`);
  await nameBuyer(page, 'dana');
  await select(page, ['A-1-1']);
  await page.locator('[data-action="reserve"]').click();
  await jobStatus(page, 'HELD');
  await until('the amount to pay', async () => {
    const amount = (await page.locator('[data-job-amount]').textContent()) ?? '';
    return /25[.,]00/.test(amount) && amount.includes('€');
  });
  await page.locator('[data-action="confirm"]').click();
  const noted = async () => ((await page.locator('[data-job-note]').textContent()) ?? '').includes('payment provider');
  await until('the note that the payment confirms the seats', noted);
  // The page reads a held job again every few seconds; once a second read has come back, the
  // first one has been shown: the note must still be there.
  const jobRead = (r) => r.request().method() === 'GET' && r.url().includes('/v1/jobs/');
  await page.waitForResponse(jobRead);
  await page.waitForResponse(jobRead);
  assert(await noted(), 'the next read of the held job wiped the payment note');
  await jobStatus(page, 'HELD');
});
