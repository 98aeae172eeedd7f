// @ts-check
/**
 * The reservation form: what it asks for (seats picked on the map, or N seats in a section),
 * its summary and button label, and its error line.
 */

import { $, showText } from './dom.js';
import { MAX_SEATS, page } from './page_state.js';

/** @typedef {import('./page_state.js').SeatRequest} SeatRequest */

/**
 * Shows why the form cannot be sent (or '' to clear it), in its alert line, so the buyer hears
 * it and sees it next to the button.
 * @param {string} text
 */
export function formError(text) {
  showText('[data-form-error]', text);
}

/**
 * What the form asks for now: picked seats, or N in a section (a section wins over picked
 * seats); null if neither. A quantity that is not a whole number is NaN, for the caller to refuse.
 * @returns {SeatRequest | null}
 */
export function currentRequest() {
  const section = /** @type {HTMLSelectElement} */ ($('[data-field="section"]')).value;
  const quantity = /** @type {HTMLInputElement} */ ($('[data-field="quantity"]')).valueAsNumber;
  if (section) return { section, quantity: Number.isInteger(quantity) ? quantity : NaN };
  if (page.selected.size > 0) return { seat_ids: [...page.selected] };
  return null;
}

/**
 * Brings the form's summary and the reserve button's label in line with what it asks for, so
 * the button says what a click will reserve.
 */
export function renderForm() {
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
