/**
 * The end of a study sends the worker back to it: the page's **Return to the study** link
 * (`a.js-return[data-follow]`) is followed after a moment, so the worker can read the page
 * first and can always click it themselves.
 *
 * @module lib/follow
 */

/** How long an end page shows before the worker is sent back to the study. */
export const FOLLOW_DELAY_MS = 1500;

/**
 * Follow the root's return link after FOLLOW_DELAY_MS when it asks to be followed.
 * A click, not location.assign: the link's target takes the whole window out of the
 * platform's iframe, as the worker's own click would.
 * @param {HTMLElement} $root
 * @returns {number | null} the timer id, to clear on destroy
 */
export function followReturnLink($root) {
  const $link = /** @type {HTMLAnchorElement | null} */ ($root.querySelector('a.js-return[data-follow]'));
  if (!$link) return null;
  return window.setTimeout(() => $link.click(), FOLLOW_DELAY_MS);
}
