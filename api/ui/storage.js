// @ts-check
/**
 * What the page keeps in the browser, under one set of names: the buyer's name and pending
 * reservations in localStorage (they outlive a reload and a closed tab), the access token and
 * a sign-in in progress in sessionStorage (they end with the tab).
 */

/** localStorage: the buyer's name, when authentication is off. */
export const BUYER_KEY = 'seatclaim.buyer';
/** sessionStorage: the bearer token the API is called with. */
const TOKEN_KEY = 'seatclaim.token';
/** sessionStorage: the PKCE verifier, state and return path of a sign-in under way. */
export const OIDC_KEY = 'seatclaim.oidc';

/**
 * The localStorage key of an event's stored reservation: one per event, so a second tab or a
 * reload of the same event finds it and resumes it.
 * @param {string} eventId
 */
export const reservationKey = (eventId) => `seatclaim.reservation.${eventId}`;

/**
 * Reads JSON from storage; a missing or damaged entry is null, so a hand-edited or truncated
 * entry never breaks the page.
 * @param {Storage} store
 * @param {string} key
 */
export function readJson(store, key) {
  try {
    return JSON.parse(store.getItem(key) ?? 'null');
  } catch {
    return null;
  }
}

/** The stored access token, or null: whether the buyer is signed in. */
export const token = () => sessionStorage.getItem(TOKEN_KEY);

/**
 * Keeps `jwt` as the buyer's access token for this tab, whichever way it came (the issuer, a
 * `#token=` fragment, the token field).
 * @param {string} jwt
 */
export function keepToken(jwt) {
  sessionStorage.setItem(TOKEN_KEY, jwt);
}

/** Forgets the access token: the buyer signed out, or the API refused it. */
export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}
