// Cancel: a held reservation is released and its seat goes back on sale, selectable again at
// once (the form is back beside the released reservation, with no "New reservation" to press).
import { assert, env, jobStatus, nameBuyer, scenario, seatState, select, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');

await scenario('cancel: release a hold', async ({ open }) => {
  const page = await open(`/events/${event}`);
  await nameBuyer(page, 'carol');
  await select(page, ['A-1-3']);
  await page.locator('[data-action="reserve"]').click();
  await jobStatus(page, 'HELD');
  await seatState(page, 'A-1-3', 'HELD');
  await page.locator('[data-action="cancel"]').click();
  await jobStatus(page, 'CANCELLED');
  await seatState(page, 'A-1-3', 'AVAILABLE');
  assert(await page.locator('[data-action="new"]').isHidden(), 'a release still asks for "New reservation"');
  await until('the seat to be selectable again', async () => {
    await page.locator('[data-seat-id="A-1-3"]').click();
    return (await page.locator('[data-seat-id="A-1-3"]').getAttribute('aria-pressed')) === 'true';
  });
});
