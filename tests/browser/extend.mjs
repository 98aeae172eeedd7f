// Extend: the buyer of a hold on an event that allows it sees the deadline an extension would
// give, extends once, and the button goes once the extensions are used up.
import { env, jobStatus, nameBuyer, scenario, select, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');

await scenario('extend: more time on a hold', async ({ open }) => {
  const page = await open(`/events/${event}`);
  await nameBuyer(page, 'erin');
  await select(page, ['A-1-2']);
  await page.locator('[data-action="reserve"]').click();
  await jobStatus(page, 'HELD');
  const extend = page.locator('[data-action="extend"]');
  await until('the Extend button with its new deadline', async () =>
    (await extend.isVisible()) && ((await page.locator('[data-extend-until]').textContent()) ?? '') !== '');
  const offered = await page.locator('[data-extend-until]').textContent();
  await extend.click();
  await until('the extension used up and the button gone', async () => !(await extend.isVisible()));
  await jobStatus(page, 'HELD');
  console.log(`extended until ${offered}`);
});
