// @ts-check
/**
 * The page of one event ("/events/{id}"): wires the seat map, the form and the reservation's
 * buttons, resumes a reservation stored for this event (a reload, a second tab) instead of
 * offering a fresh form, and keeps the map fresh while the page is visible.
 */

import { api } from './api.js';
import { $, announce, showIf } from './dom.js';
import { renderForm } from './form.js';
import { serverTime, showExtension } from './job_view.js';
import { formOpen, page } from './page_state.js';
import { drive, onReserve, settle, startOver } from './reservation.js';
import { onSeatClick, onSeatKey, onSectionChange, refreshMap, scheduleMap } from './seat_map.js';
import { readJson, reservationKey } from './storage.js';

/** Connects the event page's controls to what they do. */
function wireEventPage() {
  /** @type {HTMLElement} */
  const map = $('[data-seat-map]');
  map.addEventListener('click', onSeatClick);
  map.addEventListener('keydown', onSeatKey);
  $('[data-form]').addEventListener('submit', onReserve);
  $('[data-field="section"]').addEventListener('change', onSectionChange);
  $('[data-field="quantity"]').addEventListener('input', renderForm);
  $('[data-field="together"]').addEventListener('change', renderForm);
  $('[data-action="confirm"]').addEventListener('click', () => settle('confirm'));
  $('[data-action="cancel"]').addEventListener('click', () => settle('cancel'));
  $('[data-action="extend"]').addEventListener('click', () => settle('extend'));
  $('[data-action="retry"]').addEventListener('click', () => drive());
  $('[data-action="new"]').addEventListener('click', () => startOver());
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') refreshMap().then(scheduleMap);
    else clearTimeout(page.mapTimer);
  });
}

/**
 * Shows the event `eventId`: its seat map, and the form or the reservation stored for it.
 * @param {string} eventId
 */
export async function showEvent(eventId) {
  page.eventId = eventId;
  showIf($('[data-view="event"]'), true);
  $('[data-event-name]').textContent = eventId;
  document.title = `${eventId} · seatclaim`;
  wireEventPage();
  // A stored reservation (a reload, a second tab) is resumed, never replaced by a fresh form.
  page.reservation = readJson(localStorage, reservationKey(eventId));
  if (page.reservation) drive();
  else showIf($('[data-form]'), true);
  renderForm();
  await refreshMap();
  scheduleMap();
  nameEvent(eventId);
}

/**
 * Puts the event's name and hold length in the heading, learns whether its holds may be
 * extended, and counts down to its sale's opening, from the event list; until then (or if it
 * cannot be read) the heading keeps the event id, no hold is offered an extension and no
 * countdown shows (a reservation sent before the start still says it waits for the opening).
 * @param {string} eventId
 */
async function nameEvent(eventId) {
  try {
    const reply = await api('/v1/events');
    const event = reply.ok ? (reply.data.events ?? []).find((/** @type {any} */ e) => e.event_id === eventId) : null;
    if (!event) return;
    // The countdown counts to the server's time, as the hold's does.
    serverTime(reply);
    countDownToOpening(event.sale_starts_at);
    $('[data-event-name]').textContent = event.name || eventId;
    document.title = `${event.name || eventId} · seatclaim`;
    page.extension = { seconds: event.hold_extension_seconds ?? 0, max: event.max_hold_extensions ?? 0 };
    if (page.job) showExtension(page.job);
    if (event.hold_seconds) {
      const minutes = event.hold_seconds >= 120 ? `${Math.round(event.hold_seconds / 60)} minutes` : `${event.hold_seconds} seconds`;
      $('[data-event-hint]').textContent = `Reserved seats are held for ${minutes} while you decide.`;
    }
  } catch {
    // The heading keeps the event id.
  }
}

/**
 * Time left as a countdown reads it: "1:02:03" from an hour on, "2:03" from a minute, else
 * "42 s"; days apart, as a sale may be announced well ahead.
 * @param {number} seconds
 */
function timeLeft(seconds) {
  const two = (/** @type {number} */ n) => String(n).padStart(2, '0');
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (days > 0) return `${days} d ${hours}:${two(minutes)}:${two(rest)}`;
  if (hours > 0) return `${hours}:${two(minutes)}:${two(rest)}`;
  if (minutes > 0) return `${minutes}:${two(rest)}`;
  return `${rest} s`;
}

/**
 * Counts down to the sale's opening once a second, on the server's clock (page.clockOffset), so
 * a device clock that is off does not show the sale open early or late; the row goes once the
 * start has passed, and the opening is spoken if the buyer watched it come. The form stays
 * usable all along: a reservation sent before the start waits in the line for the opening.
 * @param {string | undefined} startsAt the event's `sale_starts_at`; absent for a sale open from the start
 */
function countDownToOpening(startsAt) {
  clearInterval(page.openingTimer);
  const opens = Date.parse(startsAt ?? '');
  if (!Number.isFinite(opens)) return;
  /** @type {HTMLElement} */
  const row = $('[data-opening-row]');
  /** Shows the time left; once none is, hides the row and says whether to go on. */
  const tick = () => {
    const left = Math.ceil((opens - (Date.now() + page.clockOffset)) / 1000);
    if (left > 0) {
      $('[data-opening-countdown]').textContent = timeLeft(left);
      showIf(row, true);
      return true;
    }
    clearInterval(page.openingTimer);
    if (!row.hidden) announce('The sale is open.');
    showIf(row, false);
    return false;
  };
  if (tick()) page.openingTimer = window.setInterval(tick, 1000);
}

/**
 * After a token is pasted: a reservation stopped for want of one (a 401) goes on; one that
 * ended without seats stays ended, its form open for the next.
 */
export function resumeReservation() {
  if (!formOpen()) drive();
}
