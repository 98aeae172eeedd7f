// Expiry: with a 2 s hold the buyer does nothing, and EXPIRED appears on its own, with the form
// back beside it.
import { env, jobStatus, nameBuyer, scenario, seatState, select, assert, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');

await scenario('expiry: a hold nobody confirms ends', async ({ open }) => {
  const page = await open(`/events/${event}`);
  await nameBuyer(page, 'dave');
  await select(page, ['A-1-1']);
  await page.locator('[data-action="reserve"]').click();
  await jobStatus(page, 'HELD');
  await jobStatus(page, 'EXPIRED');
  await seatState(page, 'A-1-1', 'AVAILABLE');
  assert(await page.locator('[data-action="confirm"]').isHidden(), 'an expired hold still offers to buy');
  // The hold ended without seats: the form is back at once for another try.
  await until('the form back after the hold ended', () => page.locator('[data-action="reserve"]').isVisible());
});
