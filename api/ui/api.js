// @ts-check
/**
 * Calling the API: one fetch wrapper that sends the bearer token when asked and reads any answer
 * as JSON, what the page learns from `/ui/config.json`, and how refusals are read (the problem's
 * detail, Retry-After).
 */

import { token } from './storage.js';

/**
 * @typedef {{auth: boolean, oidc?: {issuer: string, client_id: string} | null,
 *   token_links?: boolean}} UiConfig
 * @typedef {{status: number, ok: boolean, data: any, headers: Headers}} Reply
 */

/**
 * How the API wants to be called, from `/ui/config.json`: with or without tokens, and the
 * OpenID Connect client to sign in with. Changed in place by loadConfig, so importers see it.
 * @type {UiConfig}
 */
export const config = { auth: false, oidc: null, token_links: false };

/**
 * Reads `/ui/config.json` into `config`. An unreachable API leaves the defaults: the calls that
 * follow will say that it cannot be reached.
 */
export async function loadConfig() {
  try {
    const reply = await api('/ui/config.json');
    if (reply.ok && reply.data) Object.assign(config, reply.data);
  } catch {
    // Unreachable: the API calls that follow will say so.
  }
}

/**
 * Calls the API and reads its answer as JSON (null if it is not JSON, such as a proxy's error
 * page, whose status still says what happened). Throws only when no answer came (network error,
 * abort), so every caller handles "no answer" and "refused" apart.
 * @param {string} path
 * @param {{method?: string, body?: unknown, headers?: Record<string, string>, signed?: boolean,
 *          signal?: AbortSignal}} [options] `signed` sends the bearer token, if there is one
 * @returns {Promise<Reply>}
 */
export async function api(path, { method = 'GET', body, headers = {}, signed = false, signal } = {}) {
  /** @type {Record<string, string>} */
  const sent = { Accept: 'application/json', ...headers };
  if (body !== undefined) sent['Content-Type'] = 'application/json';
  const jwt = token();
  if (signed && config.auth && jwt) sent.Authorization = `Bearer ${jwt}`;
  const response = await fetch(path, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
    // The page does its own conditional GETs; the browser's cache must not answer for the API.
    cache: 'no-store',
    signal,
  });
  const text = response.status === 304 ? '' : await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (a proxy's error page): the status still says what happened.
  }
  return { status: response.status, ok: response.ok, data, headers: response.headers };
}

/**
 * What to tell the buyer about a refused request: the problem's detail, which the API writes
 * for people, or the bare status when the answer was no problem+json.
 * @param {Reply} reply
 */
export function problem(reply) {
  return reply.data?.detail ?? `The server answered ${reply.status}.`;
}

/**
 * Seconds to wait before the next try, from a Retry-After header (delay-seconds form), at least
 * 1: a 429 or 503 says how long, and retrying sooner only adds load.
 * @param {Reply} reply
 */
export function retryAfter(reply) {
  const seconds = Number(reply.headers.get('Retry-After'));
  return Number.isFinite(seconds) && seconds > 0 ? seconds : 1;
}
