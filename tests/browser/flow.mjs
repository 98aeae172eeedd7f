// The whole flow: a buyer names themselves, picks two seats, reserves (asking to wait for the
// decision with `Prefer: wait=5`, so the hold comes in the POST's own answer), sees the hold
// count down, buys, and the map shows the seats SOLD (in the background, and after a reload). On
// the way: the map is read with conditional GETs and its buttons survive a refresh (no flicker).
import { api, assert, countdown, env, jobStatus, nameBuyer, scenario, seatState, select, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');

await scenario('flow: reserve two seats, see the countdown, buy them', async ({ open }) => {
  const page = await open(`/events/${event}`);
  /** @type {{status: number, conditional: boolean, etag: string | null}[]} */
  const mapReads = [];
  // The page polls the map until it closes: a poll answered as it closes has no headers to
  // read any more, and is left out rather than failing the run after the scenario passed.
  const ignoreClosed = () => {};
  page.on('response', (response) => {
    if (!response.url().includes(`/v1/events/${event}/seats`)) return;
    response.request().allHeaders().then((headers) => {
      mapReads.push({ status: response.status(), conditional: 'if-none-match' in headers, etag: response.headers().etag ?? null });
    }, ignoreClosed);
  });
  /** @type {{prefer: string | undefined, status: number, body: any}[]} */
  const posts = [];
  page.on('response', (response) => {
    if (!response.url().endsWith(`/v1/events/${event}/reservations`)) return;
    Promise.all([response.request().allHeaders(), response.json()]).then(([headers, body]) => {
      posts.push({ prefer: headers.prefer, status: response.status(), body });
    }, ignoreClosed);
  });
  await nameBuyer(page, 'alice');
  const bystander = await page.locator('[data-seat-id="A-2-5"]').elementHandle();
  await select(page, ['A-1-1', 'A-1-2']);
  const seat = page.locator('[data-seat-id="A-1-1"]');
  assert((await seat.getAttribute('aria-label')) === 'Seat A-1-1, available', `label: ${await seat.getAttribute('aria-label')}`);

  await page.locator('[data-action="reserve"]').click();
  await jobStatus(page, 'HELD');
  // The POST asked to wait for the decision and its own answer carried the hold.
  await until('the reservation POST to be answered', () => posts.length === 1);
  assert(posts[0].prefer === 'wait=5' && posts[0].status === 200 && posts[0].body.status === 'HELD',
    `the reservation POST: ${JSON.stringify(posts)}`);
  const first = await until('a countdown', async () => {
    const seconds = await countdown(page);
    return seconds > 0 && seconds;
  });
  // It counts down second by second (not only when the job is read again, every 2 s).
  for (const next of [first - 1, first - 2]) {
    await until(`the countdown to read ${next} s`, async () => (await countdown(page)) === next, 3000);
  }
  await seatState(page, 'A-1-1', 'HELD');
  await seatState(page, 'A-1-2', 'HELD');

  await page.locator('[data-action="confirm"]').click();
  await jobStatus(page, 'SOLD');
  await seatState(page, 'A-1-1', 'SOLD');
  await seatState(page, 'A-1-2', 'SOLD');
  await seatState(page, 'A-1-3', 'AVAILABLE');

  // The map was read again and again, with If-None-Match once it had an ETag, and a 304 left
  // the buttons where they were: the same element is still in the page.
  await until('a conditional read of the map answered 304', () =>
    mapReads.some((read) => read.conditional && read.status === 304));
  assert(mapReads.every((read) => read.status === 200 || read.status === 304), `map reads: ${JSON.stringify(mapReads)}`);
  assert(mapReads[0].etag, 'the seat map came without an ETag');
  assert(await bystander?.evaluate((node) => node.isConnected), 'the seat buttons were rebuilt on a refresh');

  const job = await page.locator('[data-job-status]').getAttribute('data-job-id');
  const { body } = await api(`/v1/jobs/${job}`);
  assert(body.status === 'SOLD' && body.buyer_id === 'alice', `the API says ${JSON.stringify(body)}`);

  // After a reload the page shows the same, final, reservation, and starting over clears it.
  await page.reload();
  await jobStatus(page, 'SOLD');
  await seatState(page, 'A-1-1', 'SOLD');
  await seatState(page, 'A-1-2', 'SOLD');
  await page.locator('[data-action="new"]').click();
  await page.locator('[data-action="reserve"]').waitFor();
  assert(await page.evaluate(() => Object.keys(localStorage).every((key) => !key.startsWith('seatclaim.reservation.'))),
    'starting over left the reservation stored');
  assert((await page.locator('[data-field="buyer"]').inputValue()) === 'alice', 'the buyer name was not kept');
});
