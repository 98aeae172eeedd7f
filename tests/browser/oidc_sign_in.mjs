// OpenID Connect sign-in against the test issuer (tests/src/oidc_issuer.rs): "Sign in" goes to
// the issuer with an S256 challenge, the issuer sends the page back to its root with a code, and
// the page exchanges the code (with its verifier) for the issuer's access token and returns to
// the event, signed in as the issuer's subject, the answer gone from the address. A reservation
// with that token is HELD (the Rust test checks the job's buyer and the token). An answer whose
// state this tab did not send signs nobody in, and neither does a crafted `#token=` link: beside
// an issuer, the page takes tokens from the issuer alone.
import { assert, env, jobStatus, scenario, select, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');
const subject = env('SEATCLAIM_SUBJECT');

await scenario('signed in with OpenID Connect (authorization code with PKCE)', async ({ open }) => {
  const page = await open(`/events/${event}`);
  await page.locator('[data-action="sign-in"]').click();
  await until('the page to come back from the issuer to the event, signed in', async () =>
    new URL(page.url()).pathname === `/events/${event}`
      && (await page.locator('[data-signed-in-as]').textContent({ timeout: 1000 })) === subject);
  assert(!/[?&](code|state|error)=/.test(page.url()), `the issuer's answer is still in the address: ${page.url()}`);
  const stored = await page.evaluate(() => ({
    token: sessionStorage.getItem('seatclaim.token'),
    pending: sessionStorage.getItem('seatclaim.oidc'),
  }));
  assert(stored.token, 'the page keeps the access token');
  assert(stored.pending === null, `the verifier is forgotten once used: ${stored.pending}`);

  await select(page, ['A-1-1']);
  await page.locator('[data-action="reserve"]').click();
  await jobStatus(page, 'HELD');
  console.log(`JOB_ID=${await page.locator('[data-job-status]').getAttribute('data-job-id')}`);
  console.log(`TOKEN=${stored.token}`);

  // A fresh tab handed an answer it did not ask for (no sign-in of its own under way).
  const forged = await open('/?code=forged&state=forged');
  await until('the page to refuse an answer it did not ask for', async () =>
    ((await forged.locator('[data-message]').textContent({ timeout: 1000 })) ?? '').includes('does not belong'));
  assert(await forged.locator('[data-action="sign-in"]').isVisible(), 'the forged answer signed someone in');
  assert(!forged.url().includes('code='), `the forged answer is still in the address: ${forged.url()}`);

  // A fresh tab opened from a crafted link carrying someone else's token.
  const crafted = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2lnbmF0dXJl';
  const linked = await open(`/events/${event}#token=${crafted}`);
  await until('the link\'s token to leave the address', () => !linked.url().includes('#'));
  assert(await linked.locator('[data-action="sign-in"]').isVisible(), 'the link signed someone in');
  const kept = await linked.evaluate(() => sessionStorage.getItem('seatclaim.token'));
  assert(kept === null, `the page kept the link's token: ${kept}`);
});
