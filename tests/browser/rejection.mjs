// A rejection: two buyers pick the same seat; the second to reserve sees REJECTED with the
// reason (and the suggestion its code `seat_unavailable` calls for), and a map refreshed to show the seat HELD (by the other buyer); the form is back beside
// the rejection at once, so other seats can be picked without starting over first.
import { jobStatus, nameBuyer, scenario, seatState, select, until, assert, env } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');

await scenario('rejection: the other buyer was first', async ({ open }) => {
  const late = await open(`/events/${event}`);
  await nameBuyer(late, 'late');
  await select(late, ['A-1-1', 'A-1-2']);

  // Another buyer, in another browser context (its own storage), takes A-1-1 first.
  const early = await open(`/events/${event}`);
  await nameBuyer(early, 'early');
  await select(early, ['A-1-1']);
  await early.locator('[data-action="reserve"]').click();
  await jobStatus(early, 'HELD');

  await late.locator('[data-action="reserve"]').click();
  await jobStatus(late, 'REJECTED');
  const reason = (await late.locator('[data-job-reason]').textContent())?.trim();
  assert(reason, 'a rejection without a reason');
  assert(await late.locator('[data-job-reason]').isVisible(), 'the reason is not shown');
  const code = await late.locator('[data-job-reason]').getAttribute('data-reason-code');
  assert(code === 'seat_unavailable', `the reason's code: ${code}`);
  const next = ((await late.locator('[data-reason-next]').textContent()) ?? '').trim();
  assert(next.includes('got a seat first'), `the suggestion after seat_unavailable: ${JSON.stringify(next)}`);
  await seatState(late, 'A-1-1', 'HELD');
  // All or none: the other seat of the rejected request is still free.
  await seatState(late, 'A-1-2', 'AVAILABLE');
  assert(await late.locator('[data-action="confirm"]').isHidden(), 'a rejected reservation offers to buy');
  // Nothing to press before trying again: the form is back, the reason still in sight.
  await until('the form back beside the rejection', () => late.locator('[data-action="reserve"]').isVisible());
  assert(await late.locator('[data-action="new"]').isHidden(), 'a rejection still asks for "New reservation"');
  await select(late, ['A-1-2']);
  assert(await late.locator('[data-job-reason]').isVisible(), 'picking a seat hid the reason');
  console.log(`rejected: ${reason}`);
});
