// @ts-check
/**
 * The reservation panel: the job as the API last described it (status, seats, reason, the
 * actions that fit it), the hold's countdown corrected for a device clock that is off, and each
 * status change spoken for screen readers.
 */

import { $, announce, showIf, showText } from './dom.js';
import { describeSection, renderForm } from './form.js';
import { ENDED_WITHOUT_SEATS, FINAL, page } from './page_state.js';
import { nextStep } from './reasons.js';
import { paintSeats, refreshMap } from './seat_map.js';

/** @typedef {import('./page_state.js').Job} Job */

/**
 * A line under the status (retries, connection trouble), so the buyer knows the page is still
 * working on it; '' hides it.
 * @param {string} text
 */
export function note(text) {
  showText('[data-job-note]', text);
}

/** Swaps the form for the reservation panel, and locks the map while a reservation runs. */
export function showReservation() {
  showIf($('[data-form]'), false);
  showIf($('[data-reservation]'), true);
  $('[data-seat-map]').classList.add('locked');
}

/**
 * Brings the form back under a reservation that ended without seats, and unlocks the map: the
 * buyer tries other seats at once, with the outcome and its reason still in sight, rather than
 * first clearing it with "New reservation".
 */
function reopenForm() {
  showIf($('[data-form]'), true);
  $('[data-seat-map]').classList.remove('locked');
  renderForm();
}

/**
 * Gives `node` the focus when the focus was lost (the button the buyer pressed is hidden now),
 * never taking it from wherever the buyer has moved it since.
 * @param {HTMLElement} node
 */
function focusIfLost(node) {
  const active = document.activeElement;
  if (!active || active === document.body || active.closest('[hidden]')) node.focus();
}

/**
 * The seats to show for a job: its own, or those the stored request asked for (unless the job
 * was sent from elsewhere, whose request this page does not know).
 * @param {Job} job
 */
function seatsOf(job) {
  const asked = page.reservation?.sent_elsewhere ? undefined : page.reservation?.body;
  if (job.seat_ids?.length) return job.seat_ids.join(', ');
  if (asked && 'section' in asked) return describeSection(asked);
  if (asked && 'seat_ids' in asked) return asked.seat_ids.join(', ');
  return '';
}

/**
 * Shows the job as the API last described it: status (with its job id), seats, reason, and the
 * buttons that fit the status. A final status never goes back: an older read arriving late must
 * not undo a confirm.
 * @param {Job} job
 */
export function showJob(job) {
  const before = page.job?.status;
  if (before && FINAL.has(before) && !FINAL.has(job.status)) return;
  page.job = job;
  const status = $('[data-job-status]');
  status.textContent = job.status;
  status.setAttribute('data-job-id', job.job_id ?? '');
  const seats = seatsOf(job);
  $('[data-job-seats]').textContent = seats ? `Seats: ${seats}` : '';
  showReason(job);
  const held = job.status === 'HELD';
  showIf($('[data-held-row]'), held);
  const due = held ? job.amount_due : null;
  $('[data-job-amount]').textContent = due ? money(due) : '';
  showIf($('[data-amount-row]'), Boolean(due));
  const waiting = job.status === 'WAITLISTED';
  showIf($('[data-action="confirm"]'), held);
  showIf($('[data-action="cancel"]'), held || waiting);
  $('[data-action="cancel"]').textContent = waiting ? 'Leave the waitlist' : 'Release them';
  showExtension(job);
  showLine(job);
  showIf($('[data-action="retry"]'), false);
  // Ended without seats, the form itself is back (reopenForm): nothing to start over.
  const ended = ENDED_WITHOUT_SEATS.has(job.status);
  showIf($('[data-action="new"]'), FINAL.has(job.status) && !ended);
  clearInterval(page.countdown);
  if (held) {
    tick();
    page.countdown = window.setInterval(tick, 1000);
  }
  if (job.status !== before) {
    announce(ended ? `${sentence(job)} You can choose seats again.` : sentence(job));
    if (ended) reopenForm();
    paintSeats();
    // The seats changed hands (ours now, or someone else's after a rejection): show it.
    if (before) refreshMap();
    if (ended) focusIfLost($('[data-action="reserve"]'));
    else if (FINAL.has(job.status)) /** @type {HTMLElement} */ ($('[data-action="new"]')).focus();
  }
}

/**
 * Why the job ended as it did: the API's text, and what to try next, chosen by its code (the
 * text is for people and may change; the code is stable). The code stays on the element, so
 * whatever reads the page matches on it too.
 * @param {Job} job
 */
function showReason(job) {
  const reason = $('[data-job-reason]');
  reason.textContent = job.reason ?? '';
  reason.setAttribute('data-reason-code', job.reason_code ?? '');
  showIf($('[data-reason-row]'), Boolean(job.reason || job.reason_code));
  showText('[data-reason-next]', ENDED_WITHOUT_SEATS.has(job.status) ? nextStep(job.reason_code) : '');
}

/**
 * A job's place in line: a WAITLISTED job's number on its section's waitlist; a PENDING job's
 * wait for the sale's opening (places are drawn at the start, so there is none to show before
 * it), or the requests ahead of it and, once the server knows the rate they are decided at,
 * about when it will be decided. Entering and leaving the opening's line is spoken: the status
 * stays PENDING, so nothing else says it.
 * @param {Job} job
 */
function showLine(job) {
  const place = job.status === 'WAITLISTED' ? job.waitlist_position : undefined;
  showIf($('[data-waitlist-row]'), place !== undefined);
  $('[data-waitlist-position]').textContent = String(place ?? '');
  const queue = job.status === 'PENDING' ? job.queue : undefined;
  /** @type {HTMLElement} */
  const prequeueRow = $('[data-prequeue-row]');
  const wasPrequeued = !prequeueRow.hidden;
  const opens = queue?.opens_at;
  showIf(prequeueRow, opens !== undefined);
  const opensAt = Date.parse(opens ?? '');
  $('[data-prequeue-opens]').textContent = Number.isFinite(opensAt) ? ` at ${clockTime(opensAt)}` : '';
  if (opens !== undefined && !wasPrequeued) announce('You are in the line for the opening; your place is drawn when the sale opens.');
  const ahead = queue?.ahead;
  showIf($('[data-queue-row]'), typeof ahead === 'number');
  if (typeof ahead !== 'number') return;
  if (wasPrequeued) announce(`The sale is open: ${ahead} ahead of you.`);
  $('[data-queue-ahead]').textContent = String(ahead);
  const estimate = Date.parse(queue?.estimated_decision_at ?? '');
  $('[data-queue-estimate]').textContent = Number.isFinite(estimate) ? `; expected by ${clockTime(estimate)}` : '';
}

/**
 * An instant of the server's clock (ms) as the buyer's clock shows it: the time of day, with the
 * date when it is not today (a sale may open days ahead).
 * @param {number} serverMs
 */
export function clockTime(serverMs) {
  const local = new Date(serverMs - page.clockOffset);
  return local.toDateString() === new Date().toDateString() ? local.toLocaleTimeString() : local.toLocaleString();
}

/**
 * The Extend button, with the deadline it would give, while the event allows one more extension
 * of this hold.
 * @param {Job} job
 */
export function showExtension(job) {
  const { seconds, max } = page.extension;
  const deadline = Date.parse(job.hold_expires_at ?? '');
  const extendable = job.status === 'HELD' && seconds > 0 && (job.hold_extensions ?? 0) < max
    && Number.isFinite(deadline);
  if (extendable) {
    const until = new Date(deadline + seconds * 1000 - page.clockOffset);
    $('[data-extend-until]').textContent = until.toLocaleTimeString();
  }
  showIf($('[data-action="extend"]'), extendable);
}

/**
 * An amount in minor units as the buyer reads it ("€50.00"): the currency's own decimals.
 * @param {{amount: number, currency: string}} due
 */
function money(due) {
  try {
    const format = new Intl.NumberFormat(undefined, { style: 'currency', currency: due.currency });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    return format.format(due.amount / 10 ** digits);
  } catch {
    return `${due.amount} ${due.currency} (minor units)`;
  }
}

/** A status change as a sentence for screen readers. @param {Job} job */
function sentence(job) {
  switch (job.status) {
    case 'PENDING': return 'Reservation sent; waiting for the seats.';
    case 'HELD': return `Seats ${job.seat_ids?.join(', ')} are held for you. Buy them before the hold ends.`;
    case 'WAITLISTED': return `No seats right now: you are number ${job.waitlist_position ?? ''} on the waitlist for seats that come free.`;
    case 'REJECTED': return `Reservation rejected: ${job.reason ?? 'the seats are not available'}. ${nextStep(job.reason_code)}`.trim();
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
 * @param {import('./api.js').Reply} reply
 */
export function serverTime(reply) {
  const date = Date.parse(reply.headers.get('Date') ?? '');
  if (!Number.isFinite(date)) return;
  const offset = date + 500 - Date.now();
  page.clockOffset = Math.abs(offset) > 2000 ? offset : 0;
}

/** Updates the hold countdown, once a second while HELD; a minute before the end it is spoken. */
function tick() {
  const expires = Date.parse(page.job?.hold_expires_at ?? '');
  if (!Number.isFinite(expires)) return;
  const left = Math.max(0, Math.ceil((expires - (Date.now() + page.clockOffset)) / 1000));
  const text = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
  const node = $('[data-hold-countdown]');
  if (node.textContent !== text && left === 60) announce('One minute left to buy.');
  node.textContent = text;
}
