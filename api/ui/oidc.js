// @ts-check
/**
 * Signing in with OpenID Connect: the authorization code flow with PKCE (S256) against the
 * issuer `/ui/config.json` names, as a public client (no secret). signIn sends the buyer to the
 * issuer; finishSignIn takes the `?code=` it sends back and exchanges it for an access token.
 * One callback URL for every page: the page's root, which then returns to where sign-in began.
 */

import { config } from './api.js';
import { message } from './dom.js';
import { OIDC_KEY, keepToken, readJson } from './storage.js';

/**
 * A sign-in under way, kept in sessionStorage across the round trip to the issuer (and no longer
 * than this tab): the PKCE verifier, the state that ties the answer to it, and where to return.
 * @typedef {{verifier: string, state: string, redirectUri: string, returnTo: string}} Pending
 */

/** @param {Uint8Array} bytes */
function base64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** @param {number} size */
const randomText = (size) => base64url(crypto.getRandomValues(new Uint8Array(size)));

/**
 * The PKCE S256 challenge of `verifier`: BASE64URL(SHA-256(verifier)), which the issuer checks
 * the verifier against when the code is exchanged.
 * @param {string} verifier
 */
async function challengeOf(verifier) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/**
 * The issuer's endpoints, from its discovery document.
 * @param {string} issuer
 * @returns {Promise<{authorization_endpoint: string, token_endpoint: string}>}
 */
async function discover(issuer) {
  const response = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`the issuer's discovery document answered ${response.status}`);
  return response.json();
}

/** The text of a caught error, for a message. @param {unknown} error */
const reason = (error) => (error instanceof Error ? error.message : String(error));

/**
 * The sign-in button: starts the authorization code flow with PKCE, off to the issuer, which
 * sends the buyer back to the page's root with `?code=` and the state.
 */
export async function signIn() {
  const oidc = config.oidc;
  if (!oidc) return;
  try {
    if (!crypto.subtle) throw new Error('the page must be served over https (or from localhost)');
    const endpoints = await discover(oidc.issuer);
    /** @type {Pending} */
    const pending = {
      verifier: randomText(32),
      state: randomText(16),
      // One callback for every page (an issuer accepts only the exact callback URLs it lists,
      // such as the stack's BuyerCallbackUrls): the page's root, which returns to this page.
      redirectUri: `${location.origin}/`,
      returnTo: location.pathname,
    };
    const url = new URL(endpoints.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: oidc.client_id,
      redirect_uri: pending.redirectUri,
      scope: 'openid',
      state: pending.state,
      code_challenge: await challengeOf(pending.verifier),
      code_challenge_method: 'S256',
    }).toString();
    sessionStorage.setItem(OIDC_KEY, JSON.stringify(pending));
    location.assign(url);
  } catch (error) {
    message(`Sign-in is not available: ${reason(error)}`);
  }
}

/**
 * Exchanges the issuer's code for an access token at its token endpoint, with the verifier
 * only this tab holds (the issuer must allow this origin to call it).
 * @param {{issuer: string, client_id: string}} oidc
 * @param {Pending} pending
 * @param {string} code
 * @returns {Promise<string>} the access token
 */
async function exchange(oidc, pending, code) {
  const endpoints = await discover(oidc.issuer);
  const response = await fetch(endpoints.token_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: pending.redirectUri,
      client_id: oidc.client_id,
      code_verifier: pending.verifier,
    }),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok || !answer.access_token) {
    throw new Error(answer.error_description ?? answer.error ?? `status ${response.status}`);
  }
  return answer.access_token;
}

/**
 * Finishes a sign-in the issuer sent the buyer back from (`?code=` or `?error=` on the page's
 * root): keeps the token, takes the answer off the address bar, and goes back to the page where
 * sign-in began. Returns true when it navigates there, so the caller shows nothing meanwhile.
 * An answer whose state is not this tab's sign-in is refused.
 * @returns {Promise<boolean>}
 */
export async function finishSignIn() {
  const query = new URLSearchParams(location.search);
  if (!query.has('code') && !query.has('error')) return false;
  /** @type {Pending | null} */
  const pending = readJson(sessionStorage, OIDC_KEY);
  sessionStorage.removeItem(OIDC_KEY);
  history.replaceState(null, '', location.pathname);
  if (query.has('error')) {
    message(`Sign-in failed: ${query.get('error_description') ?? query.get('error')}`);
    return false;
  }
  if (!config.oidc || !pending || pending.state !== query.get('state')) {
    message('Sign-in failed: the answer does not belong to this sign-in. Please sign in again.');
    return false;
  }
  try {
    keepToken(await exchange(config.oidc, pending, query.get('code') ?? ''));
  } catch (error) {
    message(`Sign-in failed: ${reason(error)}`);
    return false;
  }
  // Only a path of this page: never somewhere else, whatever the stored entry says.
  const back = new URL(pending.returnTo || '/', location.origin);
  if (back.origin !== location.origin || back.pathname === location.pathname) return false;
  location.replace(back.pathname);
  return true;
}
