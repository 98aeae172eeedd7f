// Authentication on: a token given in the URL fragment (#token=) is kept and taken off the
// address, the page says who is signed in and sends the token (the job is the token subject's);
// after signing out, a token pasted into the sign-in field signs in again.
import { api, assert, env, jobStatus, scenario, select, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');
const token = env('SEATCLAIM_TOKEN');
const subject = env('SEATCLAIM_SUBJECT');

await scenario('signed in: a bearer token from the URL fragment or the sign-in field', async ({ open }) => {
  const page = await open(`/events/${event}#token=${token}`);
  await until('the token to leave the address', () => !page.url().includes('#'));
  await until('the page to say who is signed in', async () =>
    (await page.locator('[data-signed-in-as]').textContent()) === subject);
  assert(await page.locator('[data-field="buyer"]').isHidden(), 'the buyer name is asked for with authentication on');

  await select(page, ['A-1-1']);
  await page.locator('[data-action="reserve"]').click();
  await jobStatus(page, 'HELD');
  const jobId = await page.locator('[data-job-status]').getAttribute('data-job-id');
  const { status, body } = await api(`/v1/jobs/${jobId}`, { headers: { Authorization: `Bearer ${token}` } });
  assert(status === 200 && body.buyer_id === subject, `the API says ${status} ${JSON.stringify(body)}`);

  await page.locator('[data-action="sign-out"]').click();
  await page.locator('summary').click();
  await page.locator('[data-field="token"]').fill(token);
  await page.locator('[data-action="use-token"]').click();
  await until('the page to be signed in again', () => page.locator('[data-signed-in-as]').isVisible());
  await page.locator('[data-action="confirm"]').click();
  await jobStatus(page, 'SOLD');
});
