// @ts-check
/**
 * The reservation form: what it asks for (seats picked on the map, or N seats in a section, any
 * or together in one row), its summary and button label, and its error line.
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
 * What the form asks for now: picked seats, or N in a section, together when ticked (a section
 * wins over picked seats); null if neither. A quantity that is not a whole number is NaN, for the
 * caller to refuse.
 * @returns {SeatRequest | null}
 */
export function currentRequest() {
  const section = /** @type {HTMLSelectElement} */ ($('[data-field="section"]')).value;
  const quantity = /** @type {HTMLInputElement} */ ($('[data-field="quantity"]')).valueAsNumber;
  const together = /** @type {HTMLInputElement} */ ($('[data-field="together"]')).checked;
  if (section) {
    const request = { section, quantity: Number.isInteger(quantity) ? quantity : NaN };
    // Only when ticked: a request without it asks for any seats, as before there was a choice.
    return together ? { ...request, together: true } : request;
  }
  if (page.selected.size > 0) return { seat_ids: [...page.selected] };
  return null;
}

/**
 * How a section request reads, in the summary and on the panel: "3 seats together in section
 * A" or "any 3 seats in section A".
 * @param {{section: string, quantity: number, together?: true}} request
 */
export function describeSection(request) {
  const count = Number.isInteger(request.quantity) ? request.quantity : '?';
  const seats = `${count} seat${count === 1 ? '' : 's'}`;
  return request.together ? `${seats} together in section ${request.section}` : `any ${seats} in section ${request.section}`;
}

/** `text` with its first letter in upper case, for a sentence built from a phrase. @param {string} text */
const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Brings the form's summary and the reserve button's label in line with what it asks for, so
 * the button says what a click will reserve.
 */
export function renderForm() {
  const request = currentRequest();
  const inSection = Boolean(request && 'section' in request);
  // How many and together only mean something for a section: off while seats are picked.
  for (const field of ['quantity', 'together']) {
    /** @type {HTMLInputElement} */ ($(`[data-field="${field}"]`)).disabled = !inSection;
  }
  let summary = `Choose up to ${MAX_SEATS} seats on the map, or seats in a section.`;
  let label = 'Reserve';
  if (request && 'seat_ids' in request) {
    summary = `Selected: ${request.seat_ids.join(', ')}`;
    label = `Reserve ${request.seat_ids.length} seat${request.seat_ids.length === 1 ? '' : 's'}`;
  } else if (request && 'section' in request) {
    const how = request.together ? ': side by side in one row' : '';
    summary = `${capitalise(describeSection(request))}${how}, picked for you.`;
    label = `Reserve ${request.quantity || ''}${request.together ? ' together' : ''} in section ${request.section}`;
  }
  $('[data-selection]').textContent = summary;
  $('[data-action="reserve"]').textContent = label;
}
