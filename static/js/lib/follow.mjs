/**
 * The end of a study sends the worker back to it: the page's **Return to the study** link
 * is followed after a moment, so the worker can read the page first and can always click
 * it themselves. The end pages (`a.js-return[data-follow]`: complete/, study-end/), the
 * annotator's completion panel and the validator's last page all follow through here.
 *
 * @module lib/follow
 */

/** How long an end page shows before the worker is sent back to the study. */
export const FOLLOW_DELAY_MS = 1500;

/**
 * Follow a link after FOLLOW_DELAY_MS. A click, not location.assign: the link's target
 * takes the whole window out of the platform's iframe, as the worker's own click would.
 * @param {HTMLAnchorElement | HTMLElement} $link
 * @returns {number} the timer id, to clear on destroy
 */
export function followSoon($link) {
  return window.setTimeout(() => $link.click(), FOLLOW_DELAY_MS);
}

/**
 * Follow the root's return link when it asks to be followed (`a.js-return[data-follow]`).
 * @param {HTMLElement} $root
 * @returns {number | null} the timer id, to clear on destroy
 */
export function followReturnLink($root) {
  const $link = /** @type {HTMLAnchorElement | null} */ ($root.querySelector('a.js-return[data-follow]'));
  return $link ? followSoon($link) : null;
}
