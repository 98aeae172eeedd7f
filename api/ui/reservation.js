// @ts-check
/**
 * A reservation from the click to its final status: stored with its Idempotency-Key before it is
 * sent (so a double click, a retry or a reload never makes a second one), sent until the API
 * answers for it, then followed (long polls while PENDING, reads while HELD) until it is final;
 * bought or released while HELD; forgotten when the buyer starts over, or replaced (under a new
 * key) when the buyer reserves again after it ended without seats.
 */

import { signedOut } from './account.js';
import { api, config, problem, retryAfter } from './api.js';
import { $, announce, showIf } from './dom.js';
import { currentRequest, formError, renderForm } from './form.js';
import { note, serverTime, showJob, showReservation } from './job_view.js';
import { FINAL, MAX_SEATS, formOpen, page } from './page_state.js';
import { paintSeats, refreshMap } from './seat_map.js';
import { BUYER_KEY, reservationKey, token } from './storage.js';

/** How long one long poll of a PENDING job may wait at the server. */
const LONG_POLL_SECONDS = 10;
/**
 * How long the reservation POST asks to wait for the decision (`Prefer: wait`, RFC 7240): a
 * quick decision comes back in the POST's own answer (200), so the buyer usually sees HELD or
 * REJECTED at once; a slower one is answered 202 and followed by long polls.
 */
const PREFER_WAIT_SECONDS = 5;
/** How often a HELD job is read, so that EXPIRED shows without the buyer doing anything. */
const HELD_POLL_MS = 2000;
/** The reason code of a second reservation while the buyer's first waits for the opening. */
const ALREADY_QUEUED = 'already_queued';

/** @typedef {import('./page_state.js').Stored} Stored */
/** @typedef {import('./api.js').Reply} Reply */

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Backoff after the n-th failure in a row: 1, 2, 4, 8 s, then every 10 s. @param {number} n */
const backoff = (n) => Math.min(10_000, 1000 * 2 ** Math.max(0, n - 1));

/** An idempotency key. crypto.randomUUID only exists in secure contexts (https, localhost). */
function newKey() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Writes the reservation (its key, body and job) to localStorage, or removes it once forgotten. */
function store() {
  if (page.reservation) localStorage.setItem(reservationKey(page.eventId), JSON.stringify(page.reservation));
  else localStorage.removeItem(reservationKey(page.eventId));
}

/**
 * The request body the form asks for, with the buyer when authentication is off; null (the
 * form saying why) when the form or the account is not ready.
 * @returns {Stored['body'] | null}
 */
function requestBody() {
  const request = currentRequest();
  if (!request) {
    formError('Choose seats on the map, or a section and how many seats.');
    return null;
  }
  if ('quantity' in request && !(request.quantity >= 1 && request.quantity <= MAX_SEATS)) {
    formError(`Ask for 1 to ${MAX_SEATS} seats.`);
    return null;
  }
  const code = /** @type {HTMLInputElement} */ ($('[data-field="access_code"]')).value.trim();
  const asked = code ? { ...request, access_code: code } : { ...request };
  if (config.auth) {
    if (token()) return asked;
    formError('Sign in to reserve.');
    return null;
  }
  const buyer = localStorage.getItem(BUYER_KEY) ?? '';
  if (buyer) return { ...asked, buyer_id: buyer };
  formError('Enter your name first (top of the page).');
  /** @type {HTMLInputElement} */ ($('[data-field="buyer"]')).focus();
  return null;
}

/**
 * The reserve button. The reservation is stored before it is sent; while one runs for this
 * event, another click only resumes it (same key, same body), so a double click never makes a
 * second reservation. One that ended without seats (REJECTED, ...) is done with: the click is a
 * new attempt, with a new key, which the API must not answer with the old job.
 * @param {Event} event
 */
export function onReserve(event) {
  event.preventDefault();
  if (!formOpen()) {
    drive();
    return;
  }
  const body = requestBody();
  if (!body) return;
  formError('');
  // The ended reservation, if any, gives way: its outcome stays shown until the new one's.
  forget();
  page.reservation = { key: newKey(), body, job_id: null };
  store();
  page.selected.clear();
  paintSeats();
  drive();
}

/**
 * Drives the stored reservation to a final status: sends it if it has no job yet (again with the
 * same key and body, whatever happened before), then follows the job. A newer drive() or "new
 * reservation" stops an older one.
 */
export async function drive() {
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
        method: 'POST',
        body: stored.body,
        headers: { 'Idempotency-Key': stored.key, Prefer: `wait=${PREFER_WAIT_SECONDS}` },
        signed: true,
        signal,
      });
    } catch {
      if (!alive()) return false;
      failures += 1;
      note(`Connection lost; sending the same request again in ${backoff(failures) / 1000} s…`);
      await pause(backoff(failures));
      continue;
    }
    if (!alive()) return false;
    if (reply.status === 200 || reply.status === 202) {
      stored.job_id = reply.data.job_id;
      store();
      note('');
      if (reply.status === 200) serverTime(reply);
      showJob(reply.status === 200 ? reply.data : { job_id: stored.job_id ?? '', status: 'PENDING' });
      return true;
    }
    if (reply.status === 429 || reply.status === 503) {
      const seconds = retryAfter(reply);
      note(`The service is busy; sending the same request again in ${seconds} s…`);
      await pause(seconds * 1000);
      continue;
    }
    if (reply.status === 409 && reply.data?.reason_code === ALREADY_QUEUED && reply.data.job_id) {
      followInstead(stored, reply);
      return true;
    }
    refused(reply);
    return false;
  }
  return false;
}

/**
 * A 409 already-queued: the buyer already waits in the line for the opening with another job,
 * sent from another browser or device (this page's own would have been resumed, not sent again),
 * and the API keeps one per buyer until the sale opens. Dropping this request would leave the
 * buyer nothing to watch, so the page follows the job the problem names, saying why.
 * @param {Stored} stored
 * @param {Reply} reply
 */
function followInstead(stored, reply) {
  const why = problem(reply);
  stored.job_id = reply.data.job_id;
  stored.sent_elsewhere = why;
  store();
  note(why);
  showJob({ job_id: stored.job_id ?? '', status: 'PENDING' });
}

/**
 * A POST the API answered with neither a job nor "busy": a 401 keeps the reservation for after
 * signing in again; a 5xx offers to retry; any other 4xx refuses the request itself (unknown
 * seats, over the limit, ...), which the same key would get again, so it is dropped and the
 * form comes back with the reason.
 * @param {Reply} reply
 */
function refused(reply) {
  if (reply.status === 401) {
    signedOut('Please sign in again to send your reservation.');
    note('Waiting for you to sign in.');
  } else if (reply.status >= 500) {
    note(`The service failed: ${problem(reply)}`);
    showIf($('[data-action="retry"]'), true);
    showIf($('[data-action="new"]'), true);
  } else {
    startOver(problem(reply));
  }
}

/**
 * Follows the job: long polls while PENDING (after one read at once, which brings its place in
 * line) or WAITLISTED, reads it every HELD_POLL_MS while HELD (so EXPIRED shows), and stops at a
 * final status.
 * @param {() => boolean} alive
 * @param {AbortSignal} signal
 */
async function follow(alive, signal) {
  const jobId = /** @type {Stored} */ (page.reservation).job_id ?? '';
  // Decided in the POST's own answer: a final status changes no more.
  if (FINAL.has(page.job?.status ?? '')) return;
  for (let failures = 0; alive(); ) {
    const status = page.job?.status;
    const waiting = (status === 'PENDING' && page.job?.queue !== undefined) || status === 'WAITLISTED';
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
    const recovered = failures > 0;
    failures = 0;
    serverTime(reply);
    const before = page.job?.status;
    showJob(reply.data);
    // A note a button left (a 402 or 409) stays until the job changes or the line is lost and found.
    if (recovered || page.job?.status !== before || standingNote()) note(standingNote());
    if (FINAL.has(page.job?.status ?? '')) return;
    if (page.job?.status === 'HELD') await pause(HELD_POLL_MS);
    // A long poll answered at once while still PENDING (the server's cap on waiting polls):
    // wait a little rather than ask again in a tight loop.
    else if (Date.now() - started < 1000) await pause(1000);
  }
}

/**
 * The line under the status once the job is read: why this page follows a job it did not send,
 * while that job waits for the opening (a 409 already-queued named it), else none.
 */
function standingNote() {
  const prequeued = page.job?.status === 'PENDING' && page.job.queue?.opens_at !== undefined;
  return (prequeued && page.reservation?.sent_elsewhere) || '';
}

/**
 * Buy, release or extend the held seats, or leave the waitlist. A 409 (the hold lapsed meanwhile, or no extension is
 * left) is shown, and the polling brings the final status.
 * @param {'confirm' | 'cancel' | 'extend'} action
 */
export async function settle(action) {
  const jobId = page.reservation?.job_id;
  const status = page.job?.status;
  if (!jobId || !(status === 'HELD' || (action === 'cancel' && status === 'WAITLISTED'))) return;
  const buttons = ['confirm', 'cancel', 'extend'].map((name) => $(`[data-action="${name}"]`));
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

/**
 * Stops the stored reservation's loops and forgets it, here and in localStorage. A loop still
 * running (a HELD read between polls when the buyer released the seats) sees page.run moved on
 * and stops without touching what comes next.
 */
function forget() {
  page.run += 1;
  page.driving = false;
  page.abort?.abort();
  page.reservation = null;
  page.job = null;
  store();
  clearInterval(page.countdown);
  note('');
}

/**
 * Forgets the stored reservation and brings the form back: after a final status ("new
 * reservation"), or with `why` when the request itself was refused.
 * @param {string} [why] shown on the form
 */
export function startOver(why = '') {
  forget();
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
