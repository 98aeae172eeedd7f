// @ts-check
/**
 * The seat map: seats by section and row as buttons (built once per layout, so refreshes do not
 * flicker), painted by state, selection and ownership; read again every MAP_REFRESH_MS with
 * If-None-Match while the page is visible; chosen by click, moved through with the arrow keys.
 */

import { api, problem } from './api.js';
import { $, el, message, setIfChanged, showIf } from './dom.js';
import { formError, renderForm } from './form.js';
import { MAX_SEATS, formOpen, page } from './page_state.js';

/** How often the seat map is read again while the page is visible. */
const MAP_REFRESH_MS = 2000;

/**
 * @typedef {{seat_id: string, section: string, state: 'AVAILABLE' | 'HELD' | 'SOLD'}} Seat
 * @typedef {{seat: Seat, label: string, order: number}} Placed
 */

/**
 * Groups seats by section and row, so the map looks like the hall. Generated ids are
 * `section-row-number` (A-3-12); any other id goes into one extra row of its section, after the
 * numbered rows.
 * @param {Seat[]} seats
 * @returns {Map<string, Map<number, Placed[]>>}
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

/**
 * One row of seat buttons, registered in page.seats and page.rows for painting and arrow keys.
 * @param {string} section
 * @param {number} row
 * @param {Placed[]} entries
 */
function buildRow(section, row, entries) {
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
  return el('div', { class: 'row', role: 'group', 'aria-label': `Section ${section}, ${name}` },
    el('span', { class: 'row-label', 'aria-hidden': 'true' }, Number.isFinite(row) ? String(row) : '·'),
    el('div', { class: 'seats' }, ...buttons));
}

/**
 * Builds the map's buttons and the form's section choices; only when the event's seats change,
 * so refreshes do not flicker or lose the focus.
 * @param {Seat[]} seats
 */
function buildMap(seats) {
  /** @type {HTMLSelectElement} */
  const sectionSelect = $('[data-field="section"]');
  page.seats.clear();
  page.rows = [];
  const sections = layout(seats);
  const blocks = [...sections].map(([section, rows]) => el('section',
    { class: 'section', 'aria-label': `Section ${section}` }, el('h3', {}, `Section ${section}`),
    ...[...rows].map(([row, entries]) => buildRow(section, row, entries))));
  $('[data-seat-map]').replaceChildren(...blocks);
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

/**
 * Brings each button's attributes in line with its state, the selection and the reservation:
 * aria-pressed for the selection, a label that says the state in words, and a ring for "yours".
 */
export function paintSeats() {
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

/** Reads the seat map with If-None-Match; a 304 changes nothing. */
async function loadMap() {
  /** @type {import('./api.js').Reply} */
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

/**
 * Queues a fresh read of the map after any read already running, so two answers never race to
 * paint it; resolves once this read is done.
 */
export function refreshMap() {
  page.mapQueue = page.mapQueue.then(loadMap);
  return page.mapQueue;
}

/**
 * Reads the map every MAP_REFRESH_MS while the page is visible; a hidden tab costs the API
 * nothing (the visibilitychange handler starts it again).
 */
export function scheduleMap() {
  clearTimeout(page.mapTimer);
  if (document.visibilityState !== 'visible') return;
  page.mapTimer = window.setTimeout(() => refreshMap().then(scheduleMap), MAP_REFRESH_MS);
}

/**
 * Clicks on seats: toggles the selection, refusing taken seats and an 11th one with a reason
 * (the form is closed while a reservation runs, and open again once one ended without seats).
 * @param {Event} event
 */
export function onSeatClick(event) {
  const button = /** @type {HTMLElement} */ (event.target).closest('button[data-seat-id]');
  if (!(button instanceof HTMLButtonElement)) return;
  moveFocus(button);
  if (!formOpen()) return;
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

/**
 * Arrow keys move between seats, Home/End to a row's ends: the map is one tab stop, so the
 * keyboard needs a way through it.
 * @param {KeyboardEvent} event
 */
export function onSeatKey(event) {
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

/** A section request replaces picked seats: the selection is cleared when one is chosen. */
export function onSectionChange() {
  page.selected.clear();
  paintSeats();
  renderForm();
}
