// @ts-check
/**
 * seatclaim's buyer page: the event list at "/", and at "/events/{id}" the seat map, a
 * reservation form and the reservation's progress (PENDING -> HELD -> SOLD, or REJECTED, ...).
 *
 * Plain modern JavaScript with no build step and nothing fetched from elsewhere: the API embeds
 * this file, index.html and app.css in its binary. The map is advisory (the server decides who
 * gets a seat), so the page never guesses: it shows what the API last said.
 */

/** How often the seat map is read again while the page is visible. */
const MAP_REFRESH_MS = 2000;
/** How long one long poll of a PENDING job may wait at the server. */
const LONG_POLL_SECONDS = 10;
/** How often a HELD job is read, so that EXPIRED shows without the buyer doing anything. */
const HELD_POLL_MS = 2000;
/** The most seats one reservation may ask for (the API's limit). */
const MAX_SEATS = 10;
/** Statuses after which nothing more happens to a job. */
const FINAL = new Set(['REJECTED', 'SOLD', 'CANCELLED', 'EXPIRED', 'FAILED']);

const BUYER_KEY = 'seatclaim.buyer';
const TOKEN_KEY = 'seatclaim.token';
const OIDC_KEY = 'seatclaim.oidc';
/** @param {string} eventId */
const reservationKey = (eventId) => `seatclaim.reservation.${eventId}`;

/**
 * @typedef {{auth: boolean, oidc?: {issuer: string, client_id: string} | null}} UiConfig
 * @typedef {{seat_id: string, section: string, state: 'AVAILABLE' | 'HELD' | 'SOLD'}} Seat
 * @typedef {{job_id: string, status: string, seat_ids?: string[], hold_expires_at?: string | null,
 *            reason?: string | null}} Job
 * @typedef {{seat_ids: string[]} | {section: string, quantity: number}} SeatRequest
 * A reservation as kept in localStorage, written before the POST is sent: the key and the body
 * make a retry (after a reload, a double click or a network error) the same request, which the
 * API answers with the same job.
 * @typedef {{key: string, body: SeatRequest & {buyer_id?: string}, job_id: string | null}} Stored
 */

/** @type {UiConfig} */
let config = { auth: false, oidc: null };

/** The event page's state. */
const page = {
  eventId: '',
  /** @type {Map<string, HTMLButtonElement>} seat id -> its button, kept across refreshes */
  seats: new Map(),
  /** @type {HTMLButtonElement[][]} the buttons row by row, for arrow keys */
  rows: [],
  etag: '',
  /** @type {Set<string>} */
  selected: new Set(),
  /** @type {Stored | null} */
  reservation: null,
  /** @type {Job | null} */
  job: null,
  /** Server time minus local time when the device's clock is far off (see serverTime). */
  clockOffset: 0,
  /** Bumped to stop an old reservation's loops when the buyer starts over. */
  run: 0,
  /** Whether a drive() loop is running. */
  driving: false,
  /** @type {AbortController | null} aborts the running loop's request (a 10 s long poll) */
  abort: null,
  countdown: 0,
  mapTimer: 0,
  /** @type {Promise<void>} map reads run one after another, never two at once */
  mapQueue: Promise.resolve(),
};

// ---------------------------------------------------------------------------------------------
// Small helpers

/**
 * @template {Element} T
 * @param {string} selector
 * @returns {T}
 */
function $(selector) {
  const found = document.querySelector(selector);
  if (!found) throw new Error(`the page lacks ${selector}`);
  return /** @type {T} */ (found);
}

/**
 * @param {string} tag
 * @param {Record<string, string>} [attributes]
 * @param {(string | Node)[]} children
 */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** @param {Element} node @param {boolean} visible */
function showIf(node, visible) {
  /** @type {HTMLElement} */ (node).hidden = !visible;
}

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Backoff after the n-th failure in a row: 1, 2, 4, 8 s, then every 10 s. @param {number} n */
const backoff = (n) => Math.min(10_000, 1000 * 2 ** Math.max(0, n - 1));

/** Reads JSON from storage; a missing or damaged entry is null. @param {Storage} store @param {string} key */
function readJson(store, key) {
  try {
    return JSON.parse(store.getItem(key) ?? 'null');
  } catch {
    return null;
  }
}

/** Says `text` to screen readers through the aria-live region. @param {string} text */
function announce(text) {
  const live = $('[data-live]');
  // Clearing first makes a repeated message be spoken again.
  live.textContent = '';
  requestAnimationFrame(() => (live.textContent = text));
}

/** A page-wide message (unknown event, API unreachable, sign-in failure). @param {string} text */
function message(text) {
  const node = $('[data-message]');
  node.textContent = text;
  showIf(node, text !== '');
}

/** An idempotency key. crypto.randomUUID only exists in secure contexts (https, localhost). */
function newKey() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// ---------------------------------------------------------------------------------------------
// The API

/**
 * @typedef {{status: number, ok: boolean, data: any, headers: Headers}} Reply
 * Calls the API; throws only when no answer came (network error, abort).
 * @param {string} path
 * @param {{method?: string, body?: unknown, headers?: Record<string, string>, signed?: boolean,
 *          signal?: AbortSignal}} [options] `signed` sends the bearer token, if there is one
 * @returns {Promise<Reply>}
 */
async function api(path, { method = 'GET', body, headers = {}, signed = false, signal } = {}) {
  /** @type {Record<string, string>} */
  const sent = { Accept: 'application/json', ...headers };
  if (body !== undefined) sent['Content-Type'] = 'application/json';
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (signed && config.auth && token) sent.Authorization = `Bearer ${token}`;
  const response = await fetch(path, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
    // The page does its own conditional GETs; the browser's cache must not answer for the API.
    cache: 'no-store',
    signal,
  });
  const text = response.status === 304 ? '' : await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (a proxy's error page): the status still says what happened.
  }
  return { status: response.status, ok: response.ok, data, headers: response.headers };
}

/** What to tell the buyer about a refused request: the problem's detail. @param {Reply} reply */
function problem(reply) {
  return reply.data?.detail ?? `The server answered ${reply.status}.`;
}

/** Seconds from a Retry-After header (delay-seconds form), at least 1. @param {Reply} reply */
function retryAfter(reply) {
  const seconds = Number(reply.headers.get('Retry-After'));
  return Number.isFinite(seconds) && seconds > 0 ? seconds : 1;
}

// ---------------------------------------------------------------------------------------------
// Signing in

/** The stored access token, or null. */
const token = () => sessionStorage.getItem(TOKEN_KEY);

/** The token's subject, for display only: the API, not the page, checks tokens. @param {string} jwt */
function subjectOf(jwt) {
  try {
    const payload = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(payload)).sub ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** @param {Uint8Array} bytes */
function base64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The issuer's endpoints, from its discovery document. @param {string} issuer */
async function discover(issuer) {
  const response = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`the issuer's discovery document answered ${response.status}`);
  return response.json();
}

/** Starts the authorization code flow with PKCE: off to the issuer, back with ?code=. */
async function signIn() {
  const oidc = config.oidc;
  if (!oidc) return;
  try {
    const endpoints = await discover(oidc.issuer);
    const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
    const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
    // One callback for every page (an issuer accepts only the exact callback URLs it lists,
    // such as the stack's BuyerCallbackUrls): the page's root, which returns to this page.
    const redirectUri = `${location.origin}/`;
    const returnTo = location.pathname;
    // sessionStorage: the verifier must survive the round trip, and no longer than this tab.
    sessionStorage.setItem(OIDC_KEY, JSON.stringify({ verifier, state, redirectUri, returnTo }));
    const url = new URL(endpoints.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: oidc.client_id,
      redirect_uri: redirectUri,
      scope: 'openid',
      state,
      code_challenge: base64url(new Uint8Array(digest)),
      code_challenge_method: 'S256',
    }).toString();
    location.assign(url);
  } catch (error) {
    message(`Sign-in is not available: ${error instanceof Error ? error.message : error}`);
  }
}

/**
 * Takes a token from where sign-in leaves one: `#token=<jwt>` (development), or the issuer's
 * `?code=` redirect, exchanged at its token endpoint (a public client: no secret; the issuer must
 * allow this origin to call it).
 */
async function takeTokenFromUrl() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const pasted = fragment.get('token');
  if (pasted) {
    sessionStorage.setItem(TOKEN_KEY, pasted);
    // Off the address bar, out of the history and of anything the buyer copies.
    history.replaceState(null, '', location.pathname + location.search);
  }
  const query = new URLSearchParams(location.search);
  if (!query.has('code') && !query.has('error')) return;
  const pending = readJson(sessionStorage, OIDC_KEY);
  sessionStorage.removeItem(OIDC_KEY);
  history.replaceState(null, '', location.pathname);
  if (query.has('error')) {
    message(`Sign-in failed: ${query.get('error_description') ?? query.get('error')}`);
    return;
  }
  if (!config.oidc || !pending || pending.state !== query.get('state')) {
    message('Sign-in failed: the answer does not belong to this sign-in. Please sign in again.');
    return;
  }
  try {
    const endpoints = await discover(config.oidc.issuer);
    const response = await fetch(endpoints.token_endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: query.get('code') ?? '',
        redirect_uri: pending.redirectUri,
        client_id: config.oidc.client_id,
        code_verifier: pending.verifier,
      }),
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok || !answer.access_token) {
      throw new Error(answer.error_description ?? answer.error ?? `status ${response.status}`);
    }
    sessionStorage.setItem(TOKEN_KEY, answer.access_token);
    if (pending.returnTo && pending.returnTo !== location.pathname) {
      location.replace(pending.returnTo);
    }
  } catch (error) {
    message(`Sign-in failed: ${error instanceof Error ? error.message : error}`);
  }
}

/** Shows the buyer name field (authentication off) or the sign-in state (on). */
function renderAccount() {
  const signedIn = config.auth && token() !== null;
  showIf($('[data-account="open"]'), !config.auth);
  showIf($('[data-account="signed-in"]'), signedIn);
  showIf($('[data-account="signed-out"]'), config.auth && !signedIn);
  showIf($('[data-action="sign-in"]'), Boolean(config.oidc));
  if (signedIn) $('[data-signed-in-as]').textContent = subjectOf(token() ?? '');
}

/** The API refused the token (expired, revoked): forget it and ask for a new one. @param {string} why */
function signedOut(why) {
  sessionStorage.removeItem(TOKEN_KEY);
  renderAccount();
  message(why);
}

function wireAccount() {
  /** @type {HTMLInputElement} */
  const buyer = $('[data-field="buyer"]');
  buyer.value = localStorage.getItem(BUYER_KEY) ?? '';
  buyer.addEventListener('input', () => localStorage.setItem(BUYER_KEY, buyer.value.trim()));
  $('[data-action="sign-in"]').addEventListener('click', signIn);
  $('[data-action="sign-out"]').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    renderAccount();
    announce('Signed out.');
  });
  /** @type {HTMLInputElement} */
  const field = $('[data-field="token"]');
  const useToken = () => {
    const value = field.value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    field.value = '';
    message('');
    renderAccount();
    announce(`Signed in as ${subjectOf(value)}.`);
    // A reservation stopped for want of a token goes on now.
    if (page.reservation) drive();
  };
  $('[data-action="use-token"]').addEventListener('click', useToken);
  field.addEventListener('keydown', (e) => e.key === 'Enter' && useToken());
}

// ---------------------------------------------------------------------------------------------
// The event list

async function showEvents() {
  showIf($('[data-view="events"]'), true);
  document.title = 'Events · seatclaim';
  /** @type {Reply} */
  let reply;
  try {
    reply = await api('/v1/events');
  } catch {
    message('The service cannot be reached. Reload the page to try again.');
    return;
  }
  if (!reply.ok) {
    message(problem(reply));
    return;
  }
  const list = $('[data-event-list]');
  /** @type {{event_id: string, name?: string, seats?: Record<string, number>}[]} */
  const events = reply.data.events ?? [];
  list.replaceChildren(
    ...events.map((event) => {
      const counts = event.seats ?? {};
      const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
      const link = el('a', { href: `/events/${encodeURIComponent(event.event_id)}`, 'data-event-id': event.event_id },
        event.name || event.event_id);
      return el('li', {}, link, el('span', { class: 'counts' }, `${counts.AVAILABLE ?? 0} of ${total} seats available`));
    }),
  );
  if (events.length === 0) list.append(el('li', {}, 'No events are on sale.'));
}

// ---------------------------------------------------------------------------------------------
// The seat map

/**
 * Groups seats by section and row. Generated ids are `section-row-number` (A-3-12); any other id
 * goes into one extra row of its section, after the numbered rows.
 * @param {Seat[]} seats
 * @returns {Map<string, Map<number, {seat: Seat, label: string, order: number}[]>>}
 */
function layout(seats) {
  /** @type {ReturnType<typeof layout>} */
  const sections = new Map();
  for (const seat of seats) {
    const prefix = `${seat.section}-`;
    const match = seat.seat_id.startsWith(prefix) ? /^(\d+)-(\d+)$/.exec(seat.seat_id.slice(prefix.length)) : null;
    const row = match ? Number(match[1]) : Infinity;
    const rows = sections.get(seat.section) ?? new Map();
    sections.set(seat.section, rows);
    const entries = rows.get(row) ?? [];
    rows.set(row, entries);
    entries.push({ seat, label: match ? match[2] : seat.seat_id, order: match ? Number(match[2]) : 0 });
  }
  const byId = new Intl.Collator(undefined, { numeric: true });
  for (const [section, rows] of sections) {
    for (const row of rows.values()) row.sort((a, b) => a.order - b.order || byId.compare(a.seat.seat_id, b.seat.seat_id));
    sections.set(section, new Map([...rows].sort(([a], [b]) => a - b)));
  }
  return sections;
}

/** Builds the map's buttons; only when the event's seats change, so refreshes do not flicker. @param {Seat[]} seats */
function buildMap(seats) {
  const map = $('[data-seat-map]');
  /** @type {HTMLSelectElement} */
  const sectionSelect = $('[data-field="section"]');
  page.seats.clear();
  page.rows = [];
  const blocks = [];
  const sections = layout(seats);
  for (const [section, rows] of sections) {
    const heading = el('h3', {}, `Section ${section}`);
    const block = el('section', { class: 'section', 'aria-label': `Section ${section}` }, heading);
    for (const [row, entries] of rows) {
      const name = Number.isFinite(row) ? `row ${row}` : 'other seats';
      const buttons = entries.map(({ seat, label }) => {
        const button = /** @type {HTMLButtonElement} */ (el('button', {
          type: 'button', class: 'seat', 'data-seat-id': seat.seat_id, 'data-state': seat.state,
          'aria-pressed': 'false', tabindex: '-1',
        }, label));
        page.seats.set(seat.seat_id, button);
        return button;
      });
      page.rows.push(buttons);
      block.append(el('div', { class: 'row', role: 'group', 'aria-label': `Section ${section}, ${name}` },
        el('span', { class: 'row-label', 'aria-hidden': 'true' }, Number.isFinite(row) ? String(row) : '·'),
        el('div', { class: 'seats' }, ...buttons)));
    }
    blocks.push(block);
  }
  map.replaceChildren(...blocks);
  // One tab stop for the whole map (arrow keys move within it), so Tab gets past 200 seats.
  page.rows[0]?.[0]?.setAttribute('tabindex', '0');
  const chosen = sectionSelect.value;
  sectionSelect.replaceChildren(el('option', { value: '' }, 'Seats I pick on the map'),
    ...[...sections.keys()].map((section) => el('option', { value: section }, `Section ${section}`)));
  sectionSelect.value = sections.has(chosen) ? chosen : '';
  for (const id of page.selected) if (!page.seats.has(id)) page.selected.delete(id);
}

/** The seat ids of the current reservation's job, while it has them. */
function mySeats() {
  const job = page.job;
  return new Set(job && (job.status === 'HELD' || job.status === 'SOLD') ? job.seat_ids ?? [] : []);
}

/** Brings each button's attributes in line with its state, the selection and the reservation. */
function paintSeats() {
  const mine = mySeats();
  for (const [id, button] of page.seats) {
    const state = button.dataset.state ?? 'AVAILABLE';
    const pressed = page.selected.has(id);
    const words = { AVAILABLE: 'available', HELD: 'held', SOLD: 'sold' }[state] ?? state.toLowerCase();
    const yours = mine.has(id) ? (state === 'SOLD' ? ', bought by you' : ', held for you') : '';
    setIfChanged(button, 'aria-pressed', String(pressed));
    // aria-disabled, not disabled: taken seats stay focusable and readable.
    setIfChanged(button, 'aria-disabled', String(state !== 'AVAILABLE' && !pressed));
    setIfChanged(button, 'aria-label', `Seat ${id}, ${words}${yours}`);
    button.classList.toggle('mine', mine.has(id));
  }
}

/** @param {Element} node @param {string} name @param {string} value */
function setIfChanged(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

/** Reads the seat map with If-None-Match; a 304 changes nothing. */
async function loadMap() {
  /** @type {Reply} */
  let reply;
  try {
    reply = await api(`/v1/events/${encodeURIComponent(page.eventId)}/seats`, {
      headers: page.etag ? { 'If-None-Match': page.etag } : {},
    });
  } catch {
    $('[data-map-note]').textContent = 'Connection lost: the map may be out of date.';
    return;
  }
  if (reply.status === 304) return;
  if (reply.status === 404) {
    message(problem(reply));
    showIf($('[data-view="event"]'), false);
    return;
  }
  if (!reply.ok) {
    $('[data-map-note]').textContent = `The map could not be read: ${problem(reply)}`;
    return;
  }
  $('[data-map-note]').textContent = '';
  page.etag = reply.headers.get('ETag') ?? '';
  /** @type {Seat[]} */
  const seats = reply.data.seats ?? [];
  const same = seats.length === page.seats.size && seats.every((seat) => page.seats.has(seat.seat_id));
  if (!same) buildMap(seats);
  for (const seat of seats) setIfChanged(/** @type {HTMLButtonElement} */ (page.seats.get(seat.seat_id)), 'data-state', seat.state);
  paintSeats();
  renderForm();
}

/** Queues a fresh read of the map (after any read already running). */
function refreshMap() {
  page.mapQueue = page.mapQueue.then(loadMap);
  return page.mapQueue;
}

/** Reads the map every MAP_REFRESH_MS while the page is visible; a hidden tab costs the API nothing. */
function scheduleMap() {
  clearTimeout(page.mapTimer);
  if (document.visibilityState !== 'visible') return;
  page.mapTimer = window.setTimeout(() => refreshMap().then(scheduleMap), MAP_REFRESH_MS);
}

/** Clicks on seats: toggles the selection (the form is closed while a reservation runs). @param {Event} event */
function onSeatClick(event) {
  const button = /** @type {HTMLElement} */ (event.target).closest('button[data-seat-id]');
  if (!(button instanceof HTMLButtonElement)) return;
  moveFocus(button);
  if (page.reservation) return;
  const id = button.dataset.seatId ?? '';
  formError('');
  if (page.selected.has(id)) {
    page.selected.delete(id);
  } else if (button.dataset.state !== 'AVAILABLE') {
    formError(`Seat ${id} is ${button.dataset.state?.toLowerCase()}; choose an available seat.`);
    return;
  } else if (page.selected.size >= MAX_SEATS) {
    formError(`At most ${MAX_SEATS} seats per reservation.`);
    return;
  } else {
    page.selected.add(id);
    // Picking seats replaces a section request.
    /** @type {HTMLSelectElement} */ ($('[data-field="section"]')).value = '';
  }
  paintSeats();
  renderForm();
}

/** Makes `button` the map's tab stop and focuses it. @param {HTMLButtonElement} button */
function moveFocus(button) {
  for (const row of page.rows) for (const seat of row) if (seat !== button) seat.tabIndex = -1;
  button.tabIndex = 0;
  button.focus();
}

/** Arrow keys move between seats, Home/End to a row's ends. @param {KeyboardEvent} event */
function onSeatKey(event) {
  const button = /** @type {HTMLElement} */ (event.target).closest('button[data-seat-id]');
  if (!(button instanceof HTMLButtonElement)) return;
  const r = page.rows.findIndex((row) => row.includes(button));
  const c = page.rows[r].indexOf(button);
  /** @type {Record<string, [number, number]>} */
  const moves = {
    ArrowLeft: [r, c - 1], ArrowRight: [r, c + 1], ArrowUp: [r - 1, c], ArrowDown: [r + 1, c],
    Home: [r, 0], End: [r, page.rows[r].length - 1],
  };
  const target = moves[event.key];
  if (!target) return;
  event.preventDefault();
  const row = page.rows[Math.max(0, Math.min(page.rows.length - 1, target[0]))];
  moveFocus(row[Math.max(0, Math.min(row.length - 1, target[1]))]);
}

// ---------------------------------------------------------------------------------------------
// The reservation form

/** @param {string} text */
function formError(text) {
  const node = $('[data-form-error]');
  node.textContent = text;
  showIf(node, text !== '');
}

/** What the form asks for now: picked seats, or N in a section; null if neither. @returns {SeatRequest | null} */
function currentRequest() {
  const section = /** @type {HTMLSelectElement} */ ($('[data-field="section"]')).value;
  const quantity = /** @type {HTMLInputElement} */ ($('[data-field="quantity"]')).valueAsNumber;
  if (section) return { section, quantity: Number.isInteger(quantity) ? quantity : NaN };
  if (page.selected.size > 0) return { seat_ids: [...page.selected] };
  return null;
}

/** Updates the form's summary and the reserve button's label. */
function renderForm() {
  const request = currentRequest();
  const quantity = /** @type {HTMLInputElement} */ ($('[data-field="quantity"]'));
  quantity.disabled = !(request && 'section' in request);
  let summary = `Choose up to ${MAX_SEATS} seats on the map, or any seats in a section.`;
  let label = 'Reserve';
  if (request && 'seat_ids' in request) {
    summary = `Selected: ${request.seat_ids.join(', ')}`;
    label = `Reserve ${request.seat_ids.length} seat${request.seat_ids.length === 1 ? '' : 's'}`;
  } else if (request && 'section' in request) {
    summary = `Any ${request.quantity || '?'} seats in section ${request.section}, picked for you.`;
    label = `Reserve ${request.quantity || ''} in section ${request.section}`;
  }
  $('[data-selection]').textContent = summary;
  $('[data-action="reserve"]').textContent = label;
}

/**
 * The reserve button. The reservation is stored before it is sent; while one is stored for this
 * event, another click only resumes it, so a double click never makes a second reservation.
 * @param {Event} event
 */
function onReserve(event) {
  event.preventDefault();
  if (page.reservation) {
    drive();
    return;
  }
  const request = currentRequest();
  if (!request) {
    formError('Choose seats on the map, or a section and how many seats.');
    return;
  }
  if ('quantity' in request && !(request.quantity >= 1 && request.quantity <= MAX_SEATS)) {
    formError(`Ask for 1 to ${MAX_SEATS} seats.`);
    return;
  }
  /** @type {Stored['body']} */
  const body = { ...request };
  if (config.auth) {
    if (!token()) {
      formError('Sign in to reserve.');
      return;
    }
  } else {
    const buyer = localStorage.getItem(BUYER_KEY) ?? '';
    if (!buyer) {
      formError('Enter your name first (top of the page).');
      /** @type {HTMLInputElement} */ ($('[data-field="buyer"]')).focus();
      return;
    }
    body.buyer_id = buyer;
  }
  formError('');
  page.reservation = { key: newKey(), body, job_id: null };
  store();
  page.selected.clear();
  paintSeats();
  drive();
}

function store() {
  if (page.reservation) localStorage.setItem(reservationKey(page.eventId), JSON.stringify(page.reservation));
  else localStorage.removeItem(reservationKey(page.eventId));
}

// ---------------------------------------------------------------------------------------------
// The reservation: sending it, then following its job

/**
 * Drives the stored reservation to a final status: sends it if it has no job yet (again with the
 * same key and body, whatever happened before), then follows the job. A newer drive() or "new
 * reservation" stops an older one.
 */
async function drive() {
  // One loop per reservation: a second click (or a retry while it runs) must not send it again.
  if (page.driving) return;
  page.driving = true;
  const run = ++page.run;
  const abort = new AbortController();
  page.abort = abort;
  const alive = () => run === page.run && page.reservation !== null;
  try {
    showReservation();
    if (!page.job) showJob({ job_id: page.reservation?.job_id ?? '', status: 'PENDING' });
    if (!page.reservation?.job_id && !(await send(alive, abort.signal))) return;
    await follow(alive, abort.signal);
  } finally {
    if (run === page.run) page.driving = false;
  }
}

/**
 * POSTs the stored reservation until the API answers for it. Returns whether a job exists now.
 * @param {() => boolean} alive
 * @param {AbortSignal} signal
 */
async function send(alive, signal) {
  for (let failures = 0; alive(); ) {
    const stored = /** @type {Stored} */ (page.reservation);
    /** @type {Reply} */
    let reply;
    try {
      reply = await api(`/v1/events/${encodeURIComponent(page.eventId)}/reservations`, {
        method: 'POST', body: stored.body, headers: { 'Idempotency-Key': stored.key }, signed: true, signal,
      });
    } catch {
      if (!alive()) return false;
      failures += 1;
      note(`Connection lost; sending the same request again in ${backoff(failures) / 1000} s…`);
      await pause(backoff(failures));
      continue;
    }
    if (!alive()) return false;
    if (reply.status === 202) {
      stored.job_id = reply.data.job_id;
      store();
      note('');
      showJob({ job_id: stored.job_id ?? '', status: 'PENDING' });
      return true;
    }
    if (reply.status === 429 || reply.status === 503) {
      const seconds = retryAfter(reply);
      note(`The service is busy; sending the same request again in ${seconds} s…`);
      await pause(seconds * 1000);
      continue;
    }
    if (reply.status === 401) {
      // Kept: once signed in again, the same request goes on.
      signedOut('Please sign in again to send your reservation.');
      note('Waiting for you to sign in.');
      return false;
    }
    if (reply.status >= 500) {
      note(`The service failed: ${problem(reply)}`);
      showIf($('[data-action="retry"]'), true);
      showIf($('[data-action="new"]'), true);
      return false;
    }
    // 4xx: the request itself is refused (unknown seats, over the limit, ...); the same key would
    // be refused again, so it is dropped and the form comes back with the reason.
    startOver(problem(reply));
    return false;
  }
  return false;
}

/**
 * Follows the job: long polls while PENDING, reads it every HELD_POLL_MS while HELD (so EXPIRED
 * shows), and stops at a final status.
 * @param {() => boolean} alive
 * @param {AbortSignal} signal
 */
async function follow(alive, signal) {
  const jobId = /** @type {Stored} */ (page.reservation).job_id ?? '';
  for (let failures = 0; alive(); ) {
    const waiting = page.job?.status !== 'HELD';
    const started = Date.now();
    /** @type {Reply} */
    let reply;
    try {
      reply = await api(`/v1/jobs/${encodeURIComponent(jobId)}${waiting ? `?wait=${LONG_POLL_SECONDS}` : ''}`, { signed: true, signal });
    } catch {
      if (!alive()) return;
      failures += 1;
      note('Connection lost; still following your reservation…');
      await pause(backoff(failures));
      continue;
    }
    if (!alive()) return;
    if (reply.status === 401) {
      signedOut('Please sign in again to follow your reservation.');
      note('Waiting for you to sign in.');
      return;
    }
    if (reply.status === 404) {
      startOver('That reservation is not known to the service any more.');
      return;
    }
    if (!reply.ok) {
      failures += 1;
      await pause(reply.status === 503 ? retryAfter(reply) * 1000 : backoff(failures));
      continue;
    }
    failures = 0;
    note('');
    serverTime(reply);
    showJob(reply.data);
    if (FINAL.has(page.job?.status ?? '')) return;
    if (page.job?.status === 'HELD') await pause(HELD_POLL_MS);
    // A long poll answered at once while still PENDING (the server's cap on waiting polls):
    // wait a little rather than ask again in a tight loop.
    else if (Date.now() - started < 1000) await pause(1000);
  }
}

/** A line under the status (retries, connection trouble). @param {string} text */
function note(text) {
  const node = $('[data-job-note]');
  node.textContent = text;
  showIf(node, text !== '');
}

/** Swaps the form for the reservation panel. */
function showReservation() {
  showIf($('[data-form]'), false);
  showIf($('[data-reservation]'), true);
  $('[data-seat-map]').classList.add('locked');
}

/** Shows the job as the API last described it. @param {Job} job */
function showJob(job) {
  const before = page.job?.status;
  // A final status never goes back: an older read arriving late must not undo a confirm.
  if (before && FINAL.has(before) && !FINAL.has(job.status)) return;
  page.job = job;
  const status = $('[data-job-status]');
  status.textContent = job.status;
  status.setAttribute('data-job-id', job.job_id ?? '');
  const asked = page.reservation?.body;
  const seats = job.seat_ids?.length ? job.seat_ids.join(', ')
    : asked && 'section' in asked ? `${asked.quantity} in section ${asked.section}`
      : asked && 'seat_ids' in asked ? asked.seat_ids.join(', ') : '';
  $('[data-job-seats]').textContent = seats ? `Seats: ${seats}` : '';
  $('[data-job-reason]').textContent = job.reason ?? '';
  showIf($('[data-reason-row]'), Boolean(job.reason));
  const held = job.status === 'HELD';
  showIf($('[data-held-row]'), held);
  showIf($('[data-action="confirm"]'), held);
  showIf($('[data-action="cancel"]'), held);
  showIf($('[data-action="retry"]'), false);
  showIf($('[data-action="new"]'), FINAL.has(job.status));
  clearInterval(page.countdown);
  if (held) {
    tick();
    page.countdown = window.setInterval(tick, 1000);
  }
  if (job.status !== before) {
    announce(sentence(job));
    paintSeats();
    // The seats changed hands (ours now, or someone else's after a rejection): show it.
    if (before) refreshMap();
    if (FINAL.has(job.status)) /** @type {HTMLElement} */ ($('[data-action="new"]')).focus();
  }
}

/** A status change as a sentence for screen readers. @param {Job} job */
function sentence(job) {
  switch (job.status) {
    case 'PENDING': return 'Reservation sent; waiting for the seats.';
    case 'HELD': return `Seats ${job.seat_ids?.join(', ')} are held for you. Buy them before the hold ends.`;
    case 'REJECTED': return `Reservation rejected: ${job.reason ?? 'the seats are not available'}.`;
    case 'SOLD': return 'Bought. The seats are yours.';
    case 'CANCELLED': return 'Released. The seats are back on sale.';
    case 'EXPIRED': return 'The hold ended before you bought; the seats are back on sale.';
    case 'FAILED': return `The reservation failed: ${job.reason ?? ''}`;
    default: return `Reservation ${job.status}.`;
  }
}

/**
 * Corrects countdowns for a device clock that is far off, from the answer's Date header. Date
 * has whole seconds, so differences under 2 s are its rounding, not the clock: ignored.
 * @param {Reply} reply
 */
function serverTime(reply) {
  const date = Date.parse(reply.headers.get('Date') ?? '');
  if (!Number.isFinite(date)) return;
  const offset = date + 500 - Date.now();
  page.clockOffset = Math.abs(offset) > 2000 ? offset : 0;
}

/** Updates the hold countdown, once a second while HELD. */
function tick() {
  const expires = Date.parse(page.job?.hold_expires_at ?? '');
  if (!Number.isFinite(expires)) return;
  const left = Math.max(0, Math.ceil((expires - (Date.now() + page.clockOffset)) / 1000));
  const text = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
  const node = $('[data-hold-countdown]');
  if (node.textContent !== text && left === 60) announce('One minute left to buy.');
  node.textContent = text;
}

/**
 * Buy or release the held seats. A 409 (the hold lapsed meanwhile) is shown, and the polling
 * brings the final status.
 * @param {'confirm' | 'cancel'} action
 */
async function settle(action) {
  const jobId = page.reservation?.job_id;
  if (!jobId || page.job?.status !== 'HELD') return;
  const buttons = [$('[data-action="confirm"]'), $('[data-action="cancel"]')];
  for (const b of buttons) /** @type {HTMLButtonElement} */ (b).disabled = true;
  try {
    const reply = await api(`/v1/jobs/${encodeURIComponent(jobId)}/${action}`, { method: 'POST', signed: true });
    if (reply.ok) showJob(reply.data);
    else if (reply.status === 401) signedOut('Please sign in again, then buy or release the seats.');
    else note(problem(reply));
  } catch {
    note('Connection lost; nothing was changed. Try again.');
  } finally {
    for (const b of buttons) /** @type {HTMLButtonElement} */ (b).disabled = false;
  }
}

/** Forgets the stored reservation and brings the form back. @param {string} [why] shown on the form */
function startOver(why = '') {
  page.run += 1;
  page.driving = false;
  page.abort?.abort();
  page.reservation = null;
  page.job = null;
  store();
  clearInterval(page.countdown);
  note('');
  showIf($('[data-reservation]'), false);
  showIf($('[data-form]'), true);
  $('[data-seat-map]').classList.remove('locked');
  const status = $('[data-job-status]');
  status.textContent = '';
  status.setAttribute('data-job-id', '');
  formError(why);
  paintSeats();
  renderForm();
  refreshMap();
  if (!why) {
    const first = document.querySelector('[data-seat-map] button[tabindex="0"]');
    if (first instanceof HTMLElement) first.focus();
    announce('Choose seats for a new reservation.');
  }
}

// ---------------------------------------------------------------------------------------------
// The event page

/** @param {string} eventId */
async function showEvent(eventId) {
  page.eventId = eventId;
  showIf($('[data-view="event"]'), true);
  $('[data-event-name]').textContent = eventId;
  document.title = `${eventId} · seatclaim`;
  /** @type {HTMLElement} */
  const map = $('[data-seat-map]');
  map.addEventListener('click', onSeatClick);
  map.addEventListener('keydown', onSeatKey);
  $('[data-form]').addEventListener('submit', onReserve);
  $('[data-field="section"]').addEventListener('change', () => {
    // A section request replaces picked seats.
    page.selected.clear();
    paintSeats();
    renderForm();
  });
  $('[data-field="quantity"]').addEventListener('input', renderForm);
  $('[data-action="confirm"]').addEventListener('click', () => settle('confirm'));
  $('[data-action="cancel"]').addEventListener('click', () => settle('cancel'));
  $('[data-action="retry"]').addEventListener('click', () => drive());
  $('[data-action="new"]').addEventListener('click', () => startOver());
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') refreshMap().then(scheduleMap);
    else clearTimeout(page.mapTimer);
  });

  // A stored reservation (a reload, a second tab) is resumed, never replaced by a fresh form.
  page.reservation = readJson(localStorage, reservationKey(eventId));
  if (page.reservation) drive();
  else showIf($('[data-form]'), true);
  renderForm();
  await refreshMap();
  scheduleMap();
  nameEvent(eventId);
}

/** Puts the event's name and hold length in the heading, from the event list. @param {string} eventId */
async function nameEvent(eventId) {
  try {
    const reply = await api('/v1/events');
    const event = reply.ok ? (reply.data.events ?? []).find((/** @type {any} */ e) => e.event_id === eventId) : null;
    if (!event) return;
    $('[data-event-name]').textContent = event.name || eventId;
    document.title = `${event.name || eventId} · seatclaim`;
    if (event.hold_seconds) {
      const minutes = event.hold_seconds >= 120 ? `${Math.round(event.hold_seconds / 60)} minutes` : `${event.hold_seconds} seconds`;
      $('[data-event-hint]').textContent = `Reserved seats are held for ${minutes} while you decide.`;
    }
  } catch {
    // The heading keeps the event id.
  }
}

async function main() {
  try {
    const reply = await api('/ui/config.json');
    if (reply.ok && reply.data) config = reply.data;
  } catch {
    // Unreachable: the API calls below will say so.
  }
  await takeTokenFromUrl();
  wireAccount();
  renderAccount();
  const match = /^\/events\/([^/]+)\/?$/.exec(location.pathname);
  if (match) await showEvent(decodeURIComponent(match[1]));
  else await showEvents();
}

main();
