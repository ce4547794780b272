/**
 * The page that ends a study before the task (the worker declined consent): follows the
 * **Return to the study** link (lib/follow).
 *
 * Root: `[data-module="study-end"]` with `a.js-return[data-follow]` when there is a
 * platform to return to.
 *
 * @module study-end
 */

import { followReturnLink } from '../lib/follow.mjs';

export default class StudyEnd {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.timer = followReturnLink($root);
  }

  destroy() {
    if (this.timer !== null) window.clearTimeout(this.timer);
  }
}
