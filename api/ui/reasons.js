// @ts-check
/**
 * What the page suggests after a reservation ends without seats, decided by the job's
 * `reason_code` (the API's stable code; the `reason` text beside it is shown as the API wrote
 * it, never reworded). A code with no suggestion here shows the reason alone.
 */

/** @type {Readonly<Record<string, string>>} */
const NEXT_STEP = {
  seat_unavailable: 'Another buyer got a seat first: the map now shows the seats still free.',
  seat_unknown: 'Pick seats on the map: it shows every seat of the event.',
  not_enough_seats: 'Ask for fewer seats, or for seats in another section.',
  no_adjacent_seats: 'Ask for fewer seats together, or untick "Seats together" to take the best seats apart.',
  buyer_limit: 'You already hold or wait for as many seats of this event as one buyer may.',
  reserved_for_waitlist: 'This section serves its waitlist first: ask for a number of seats in it to join the line.',
  waitlist_closed: 'The waitlist has closed: the seats still free on the map can be reserved.',
  request_expired: 'Your request waited too long to be decided: send it again.',
  channel_seats: 'These seats are for a presale: enter your presale code, or choose seats of another section.',
  channel_not_open: 'The presale has not started yet: try again when it opens.',
  access_code_unknown: 'Check the presale code: it is not one of this event\'s codes.',
  access_code_expired: 'Your presale code is not valid at this time.',
  access_code_used_up: 'Your presale code has no seats left.',
  access_code_bound: 'Your presale code was used by another buyer first.',
  access_code_revoked: 'Your presale code was withdrawn.',
};

/**
 * The suggestion for a job that ended with `code`, or '' when there is none.
 * @param {string | null | undefined} code
 */
export function nextStep(code) {
  return (code && Object.hasOwn(NEXT_STEP, code) && NEXT_STEP[code]) || '';
}
