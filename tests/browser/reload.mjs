// Reload while PENDING (the app runs without a worker, so the job stays PENDING). The reservation
// is stored before it is sent, so: a double click sends it once; a reload while its POST is
// still unanswered sends the same key and body again; a network error is retried with them too;
// and a reload once the job exists resumes that job (and shows its place in line) instead of
// offering a new form. Prints
// JOB_ID=<id> for the Rust test, which then runs a worker and checks the event holds exactly
// the seats of one reservation.
import { api, assert, env, jobStatus, nameBuyer, scenario, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');
const reservations = `**/v1/events/${event}/reservations`;

await scenario('reload: a pending reservation survives reloads, a double click and a network error', async ({ open }) => {
  const page = await open(`/events/${event}`);
  /** @type {{key: string | undefined, body: string | null}[]} */
  const posts = [];
  /** @type {string[]} job ids the server gave, whether or not the page got to see them */
  const answered = [];
  await page.route(reservations, async (route) => {
    const request = route.request();
    posts.push({ key: (await request.allHeaders())['idempotency-key'], body: request.postData() });
    const response = await route.fetch();
    answered.push((await response.json()).job_id);
    // 1st: the server has it, the answer never arrives (the page is reloaded meanwhile).
    if (posts.length === 1) return;
    // 2nd: the answer is lost to a network error.
    if (posts.length === 2) return route.abort('internetdisconnected');
    return route.fulfill({ response });
  });
  const stored = async () => page.evaluate(() =>
    Object.entries(localStorage).filter(([key]) => key.startsWith('seatclaim.reservation.')).map(([, value]) => JSON.parse(value)));

  await nameBuyer(page, 'erin');
  await page.locator('[data-field="section"]').selectOption('A');
  await page.locator('[data-field="quantity"]').fill('2');
  // Two clicks in the same task, before any answer: the second must not send anything.
  await page.locator('[data-action="reserve"]').evaluate((button) => {
    button.click();
    button.click();
  });
  await until('the server to take the first POST', () => answered.length === 1);
  const [first] = await stored();
  assert(first && first.key === posts[0].key && first.job_id === null,
    `before any answer the page stored ${JSON.stringify(first)} (sent key ${posts[0].key})`);

  await page.reload();
  await jobStatus(page, 'PENDING');
  const status = page.locator('[data-job-status]');
  const jobId = await until('a job id on the status', () => status.getAttribute('data-job-id'));
  assert(posts.length === 3, `the page sent ${posts.length} POSTs: ${JSON.stringify(posts)}`);
  assert(posts.every((post) => post.key === first.key && post.body === posts[0].body),
    `the retries changed the request: ${JSON.stringify(posts)}`);
  assert(answered.every((id) => id === jobId), `the server answered ${answered}, the page shows ${jobId}`);
  assert(JSON.parse(posts[0].body ?? '{}').buyer_id === 'erin', `body: ${posts[0].body}`);

  // Once the job is known, a reload resumes it: no form, no POST.
  await page.reload();
  await jobStatus(page, 'PENDING');
  await until('the same job id after the reload', async () => (await status.getAttribute('data-job-id')) === jobId);
  assert(await page.locator('[data-action="reserve"]').isHidden(), 'a reload offered a fresh form over a pending reservation');
  const after = await stored();
  assert(after.length === 1 && after[0].job_id === jobId && after[0].key === first.key, `after the reload: ${JSON.stringify(after)}`);
  assert(posts.length === 3, `the page sent ${posts.length} POSTs`);

  await until('its place in line', async () =>
    (await page.locator('[data-queue-ahead]').isVisible()) && (await page.locator('[data-queue-ahead]').textContent()) === '0');

  const { status: code, body } = await api(`/v1/jobs/${jobId}`);
  assert(code === 200 && body.status === 'PENDING' && body.buyer_id === 'erin', `the API says ${code} ${JSON.stringify(body)}`);
  console.log(`JOB_ID=${jobId}`);
});
