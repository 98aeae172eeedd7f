// @ts-check
/**
 * The page's small DOM helpers: finding the elements index.html declares, building new ones, and
 * the two ways the page speaks to the buyer (a visible line, and the aria-live region).
 */

/**
 * The element `selector` names. index.html declares every element the page uses, so a missing
 * one is a bug in the page, not a state to handle: it throws.
 * @template {Element} T
 * @param {string} selector
 * @returns {T}
 */
export function $(selector) {
  const found = document.querySelector(selector);
  if (!found) throw new Error(`the page lacks ${selector}`);
  return /** @type {T} */ (found);
}

/**
 * A new element with attributes and children: the seat map and the event list are built from
 * data, never from HTML strings, so an event's or seat's name cannot inject markup.
 * @param {string} tag
 * @param {Record<string, string>} [attributes]
 * @param {(string | Node)[]} children
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/**
 * Shows or hides `node` with the `hidden` attribute, which app.css enforces, so that hidden
 * parts are also hidden from screen readers.
 * @param {Element} node
 * @param {boolean} visible
 */
export function showIf(node, visible) {
  /** @type {HTMLElement} */ (node).hidden = !visible;
}

/**
 * Sets an attribute only when it changes: the map is repainted every 2 s, and rewriting equal
 * values would make screen readers and tests see changes that are not there.
 * @param {Element} node
 * @param {string} name
 * @param {string} value
 */
export function setIfChanged(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

/**
 * Puts `text` in the element `selector` names, hidden while empty: the page's messages, the
 * form's error and the reservation's note all come and go this way.
 * @param {string} selector
 * @param {string} text
 */
export function showText(selector, text) {
  const node = $(selector);
  node.textContent = text;
  showIf(node, text !== '');
}

/**
 * Says `text` to screen readers through the aria-live region, so a status change is heard
 * without moving the focus.
 * @param {string} text
 */
export function announce(text) {
  const live = $('[data-live]');
  // Clearing first makes a repeated message be spoken again.
  live.textContent = '';
  requestAnimationFrame(() => (live.textContent = text));
}

/**
 * A page-wide message (unknown event, API unreachable, sign-in failure); '' hides it.
 * @param {string} text
 */
export function message(text) {
  showText('[data-message]', text);
}
