// Keyboard only: Tab to the name field and type, Tab into the map, arrow keys between seats,
// Space and Enter select, Tab to reserve, Enter reserves, HELD appears. Focus is visible.
import { assert, env, jobStatus, scenario, until } from './lib.mjs';

const event = env('SEATCLAIM_EVENT');

await scenario('keyboard: reserve without a mouse', async ({ open }) => {
  const page = await open(`/events/${event}`);
  await page.locator('[data-seat-id="A-1-1"]').waitFor();
  const focused = () => page.evaluate(() => {
    const node = document.activeElement;
    return {
      seat: node?.getAttribute('data-seat-id') ?? null,
      field: node?.getAttribute('data-field') ?? null,
      action: node?.getAttribute('data-action') ?? null,
      visible: node ? node.matches(':focus-visible') : false,
    };
  });
  /** Presses Tab until `wanted` holds of the focused element (at most 15 times). @param {string} what @param {(f: Awaited<ReturnType<typeof focused>>) => boolean} wanted */
  const tabTo = async (what, wanted) => {
    for (let presses = 0; presses < 15; presses += 1) {
      await page.keyboard.press('Tab');
      const now = await focused();
      if (wanted(now)) {
        assert(now.visible, `${what} has focus but it does not show`);
        return;
      }
    }
    throw new Error(`15 presses of Tab never reached ${what}`);
  };

  await tabTo('the buyer name field', (f) => f.field === 'buyer');
  await page.keyboard.type('kim');
  await tabTo('a seat', (f) => f.seat !== null);
  assert((await focused()).seat === 'A-1-1', `Tab entered the map at ${(await focused()).seat}`);
  await page.keyboard.press('ArrowRight');
  assert((await focused()).seat === 'A-1-2', 'ArrowRight did not move to the next seat');
  await page.keyboard.press('Space');
  await until('Space to select A-1-2', async () =>
    (await page.locator('[data-seat-id="A-1-2"]').getAttribute('aria-pressed')) === 'true');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await until('Enter to select A-1-3', async () =>
    (await page.locator('[data-seat-id="A-1-3"]').getAttribute('aria-pressed')) === 'true');
  await tabTo('the reserve button', (f) => f.action === 'reserve');
  await page.keyboard.press('Enter');
  await jobStatus(page, 'HELD');
  const live = await until('the change to be announced', () => page.locator('[data-live]').textContent());
  assert(/held/i.test(live ?? ''), `the live region says ${live}`);
});
