// Waitlist: the only seat is held by someone else, so the page's section request waits in line
// and shows its number; when the other hold is released, the page's reservation is served and
// shows HELD without a reload.
import { api, assert, env, jobStatus, nameBuyer, scenario, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');
const blocker = env('SEATCLAIM_BLOCKER_JOB');

await scenario('waitlist: in line, then served', async ({ open }) => {
  const page = await open(`/events/${event}`);
  await nameBuyer(page, 'fay');
  await page.locator('[data-field="section"]').selectOption('W');
  await page.locator('[data-field="quantity"]').fill('1');
  await page.locator('[data-action="reserve"]').click();
  await jobStatus(page, 'WAITLISTED');
  await until('the place on the waitlist', async () =>
    (await page.locator('[data-waitlist-position]').textContent()) === '1');
  assert(await page.locator('[data-action="cancel"]').isVisible(), 'no way to leave the waitlist');

  const { status } = await api(`/v1/jobs/${blocker}/cancel`, { method: 'POST' });
  assert(status === 200, `releasing the other hold answered ${status}`);
  await jobStatus(page, 'HELD');
  assert(await page.locator('[data-waitlist-row]').isHidden(), 'the waitlist row stayed');
});
