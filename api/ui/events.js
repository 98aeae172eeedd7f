// @ts-check
/** The event list at "/": each event on sale, linked to its seat map, with its seats available. */

import { api, problem } from './api.js';
import { $, el, message, showIf } from './dom.js';

/** @typedef {{event_id: string, name?: string, seats?: Record<string, number>}} EventSummary */

/**
 * One event of the list: its name linked to its page, and how many of its seats are available.
 * @param {EventSummary} event
 */
function eventItem(event) {
  const counts = event.seats ?? {};
  const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
  const link = el('a', { href: `/events/${encodeURIComponent(event.event_id)}`, 'data-event-id': event.event_id },
    event.name || event.event_id);
  return el('li', {}, link, el('span', { class: 'counts' }, `${counts.AVAILABLE ?? 0} of ${total} seats available`));
}

/**
 * Shows the events on sale (the page at "/"); says so when the API cannot be reached or refuses,
 * and when there are none.
 */
export async function showEvents() {
  showIf($('[data-view="events"]'), true);
  document.title = 'Events · seatclaim';
  /** @type {import('./api.js').Reply} */
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
  /** @type {EventSummary[]} */
  const events = reply.data.events ?? [];
  list.replaceChildren(...events.map(eventItem));
  if (events.length === 0) list.append(el('li', {}, 'No events are on sale.'));
}
