// @ts-check
/**
 * seatclaim's buyer page: the event list at "/", and at "/events/{id}" the seat map, a
 * reservation form and the reservation's progress (PENDING -> HELD -> SOLD, or REJECTED, ...).
 *
 * Plain modern JavaScript modules with no build step and nothing fetched from elsewhere: the API
 * embeds index.html, app.css and every module (api/ui/*.js) in its binary. This is the entry
 * module: it learns how to sign in, takes a token from where sign-in leaves one, and shows the
 * part of the page the path asks for.
 */

import { renderAccount, takeTokenFromFragment, wireAccount } from './account.js';
import { loadConfig } from './api.js';
import { resumeReservation, showEvent } from './event_page.js';
import { showEvents } from './events.js';
import { finishSignIn } from './oidc.js';

async function main() {
  await loadConfig();
  takeTokenFromFragment();
  // Back from the issuer on the root: on to the page where sign-in began, showing nothing here.
  if (await finishSignIn()) return;
  wireAccount(resumeReservation);
  renderAccount();
  const match = /^\/events\/([^/]+)\/?$/.exec(location.pathname);
  if (match) await showEvent(decodeURIComponent(match[1]));
  else await showEvents();
}

main();
