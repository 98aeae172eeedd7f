// @ts-check
/**
 * The event page's state, shared by the seat map, the form and the reservation: what the API
 * last said (the page never guesses: the map is advisory and the server decides who gets a
 * seat), what the buyer selected, and the loops and timers running.
 */

/** The most seats one reservation may ask for (the API's limit). */
export const MAX_SEATS = 10;
/** Statuses after which nothing more happens to a job. */
export const FINAL = new Set(['REJECTED', 'SOLD', 'CANCELLED', 'EXPIRED', 'FAILED']);
/**
 * Final statuses that leave the buyer holding nothing: the form comes back beside the outcome at
 * once, so the buyer can try other seats without starting over first (a new attempt, under a
 * new Idempotency-Key). Not FAILED: an operator may replay it, and the page keeps following it.
 */
export const ENDED_WITHOUT_SEATS = new Set(['REJECTED', 'CANCELLED', 'EXPIRED']);

/**
 * @typedef {{job_id: string, status: string, seat_ids?: string[], hold_expires_at?: string | null,
 *            reason?: string | null, reason_code?: string | null,
 *            amount_due?: {amount: number, currency: string},
 *            hold_extensions?: number,
 *            queue?: Queue,
 *            waitlist_position?: number}} Job
 * A PENDING job's place in line: before the sale's opening only `opens_at` (places are drawn
 * at the start), after it the requests ahead and, once the server knows a rate, an estimate.
 * @typedef {{ahead?: number, estimated_decision_at?: string | null, opens_at?: string}} Queue
 * Seats picked on the map, or `quantity` seats of a section: any (the best first) or, with
 * `together`, side by side in one row (sent only when true: the API refuses it with seat_ids).
 * @typedef {{seat_ids: string[]} | {section: string, quantity: number, together?: true}} SeatRequest
 * A reservation as kept in localStorage, written before the POST is sent: the key and the body
 * make a retry (after a reload, a double click or a network error) the same request, which the
 * API answers with the same job. `sent_elsewhere` is the problem's detail when the API named
 * another job of the buyer's instead (409 already-queued: one per buyer before the opening), which
 * this page then follows: its seats are not `body`'s.
 * A presale's `access_code`, when the buyer typed one, goes with the request.
 * @typedef {{key: string, body: SeatRequest & {buyer_id?: string, access_code?: string},
 *            job_id: string | null,
 *            sent_elsewhere?: string}} Stored
 */

/** The event page's state. */
export const page = {
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
  /** The event's hold extension, from the event list: seconds per extension (0: none), and how many. */
  extension: { seconds: 0, max: 0 },
  /** Server time minus local time when the device's clock is far off (see serverTime). */
  clockOffset: 0,
  /** Bumped to stop an old reservation's loops when the buyer starts over. */
  run: 0,
  /** Whether a drive() loop is running. */
  driving: false,
  /** @type {AbortController | null} aborts the running loop's request (a 10 s long poll) */
  abort: null,
  countdown: 0,
  /** The countdown to the sale's opening, once a second until the start. */
  openingTimer: 0,
  mapTimer: 0,
  /** @type {Promise<void>} map reads run one after another, never two at once */
  mapQueue: Promise.resolve(),
};

/**
 * Whether the buyer may ask for seats now: no reservation runs, or the last one ended without
 * seats (ENDED_WITHOUT_SEATS), whose outcome stays shown until the next one replaces it.
 */
export function formOpen() {
  return page.reservation === null || ENDED_WITHOUT_SEATS.has(page.job?.status ?? '');
}
