// @ts-check
/**
 * The page of one event ("/events/{id}"): wires the seat map, the form and the reservation's
 * buttons, resumes a reservation stored for this event (a reload, a second tab) instead of
 * offering a fresh form, and keeps the map fresh while the page is visible.
 */

import { api } from './api.js';
import { $, showIf } from './dom.js';
import { renderForm } from './form.js';
import { showExtension } from './job_view.js';
import { page } from './page_state.js';
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
 * Puts the event's name and hold length in the heading, and learns whether its holds may be
 * extended, from the event list; until then (or if it cannot be read) the heading keeps the
 * event id and no hold is offered an extension.
 * @param {string} eventId
 */
async function nameEvent(eventId) {
  try {
    const reply = await api('/v1/events');
    const event = reply.ok ? (reply.data.events ?? []).find((/** @type {any} */ e) => e.event_id === eventId) : null;
    if (!event) return;
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
 * After a token is pasted: a reservation stopped for want of one (a 401) goes on.
 */
export function resumeReservation() {
  if (page.reservation) drive();
}
