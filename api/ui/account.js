// @ts-check
/**
 * Who the buyer is. With authentication off, a name the buyer types once (kept in
 * localStorage). With it on, a bearer token: from the issuer (oidc.js), from a `#token=<jwt>`
 * fragment, or pasted into the token field (both for development); the header says who is
 * signed in and offers to sign out.
 */

import { config } from './api.js';
import { $, announce, message, showIf } from './dom.js';
import { signIn } from './oidc.js';
import { BUYER_KEY, forgetToken, keepToken, token } from './storage.js';

/**
 * The token's subject, for display only: the API, not the page, checks tokens, so a token that
 * cannot be read shows as "unknown" rather than failing here.
 * @param {string} jwt
 */
function subjectOf(jwt) {
  try {
    const payload = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes)).sub ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Keeps a token given as `#token=<jwt>` (development: `seatclaimctl token --sub b1`) when the API
 * allows such links (HS256 development keys only: beside an issuer, a crafted link would sign the
 * buyer in as its sender), and takes it off the address bar, out of the history and of anything
 * the buyer copies, either way.
 */
export function takeTokenFromFragment() {
  const pasted = new URLSearchParams(location.hash.slice(1)).get('token');
  if (!pasted) return;
  if (config.token_links) keepToken(pasted);
  history.replaceState(null, '', location.pathname + location.search);
}

/**
 * Shows the buyer name field (authentication off) or the sign-in state (on): signed in as the
 * token's subject, or the sign-in button (when an issuer is configured) and the token field.
 */
export function renderAccount() {
  const signedIn = config.auth && token() !== null;
  showIf($('[data-account="open"]'), !config.auth);
  showIf($('[data-account="signed-in"]'), signedIn);
  showIf($('[data-account="signed-out"]'), config.auth && !signedIn);
  showIf($('[data-action="sign-in"]'), Boolean(config.oidc));
  if (signedIn) $('[data-signed-in-as]').textContent = subjectOf(token() ?? '');
}

/**
 * The API refused the token (expired, revoked): forgets it and asks for a new one, saying why.
 * @param {string} why
 */
export function signedOut(why) {
  forgetToken();
  renderAccount();
  message(why);
}

/**
 * Wires the header's fields and buttons: the buyer name, sign-in and sign-out, and the token
 * field. `onSignedIn` runs after a token is pasted, so that a reservation stopped for want of a
 * token goes on.
 * @param {() => void} onSignedIn
 */
export function wireAccount(onSignedIn) {
  /** @type {HTMLInputElement} */
  const buyer = $('[data-field="buyer"]');
  buyer.value = localStorage.getItem(BUYER_KEY) ?? '';
  buyer.addEventListener('input', () => localStorage.setItem(BUYER_KEY, buyer.value.trim()));
  $('[data-action="sign-in"]').addEventListener('click', signIn);
  $('[data-action="sign-out"]').addEventListener('click', () => {
    forgetToken();
    renderAccount();
    announce('Signed out.');
  });
  /** @type {HTMLInputElement} */
  const field = $('[data-field="token"]');
  const useToken = () => {
    const value = field.value.trim();
    if (!value) return;
    keepToken(value);
    field.value = '';
    message('');
    renderAccount();
    announce(`Signed in as ${subjectOf(value)}.`);
    onSignedIn();
  };
  $('[data-action="use-token"]').addEventListener('click', useToken);
  field.addEventListener('keydown', (e) => e.key === 'Enter' && useToken());
}
