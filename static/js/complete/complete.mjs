/**
 * Completion page: copies the completion code, and submits the MTurk form once.
 *
 * Root: `[data-module="complete"]` with `.js-code`, `.js-copy`, `.js-copy-status` and,
 * for MTurk ExternalQuestion HITs, `form.js-mturk-form` (sent at once by lib/mturk).
 *
 * @module complete
 */

import { followReturnLink } from '../lib/follow.mjs';
import { submitRenderedForm } from '../lib/mturk.mjs';
import { t } from '../lib/i18n.mjs';

export default class Complete {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.$root = $root;
    this.$code = /** @type {HTMLElement | null} */ ($root.querySelector('.js-code'));
    this.$status = /** @type {HTMLElement | null} */ ($root.querySelector('.js-copy-status'));
    this.listeners = new AbortController();
    $root.addEventListener('click', (event) => this.onClick(event), { signal: this.listeners.signal });
    // MTurk's form goes at once; else, straight after the after-survey's Finish, the
    // Return to the study link is followed (lib/follow).
    this.timer = submitRenderedForm($root) ? null : followReturnLink($root);
  }

  /** @param {MouseEvent} event */
  onClick(event) {
    const $target = /** @type {HTMLElement} */ (event.target);
    if ($target.closest('.js-copy')) this.copy();
  }

  /** Copy the code; where the clipboard is refused (iframes), select it for Ctrl+C. */
  async copy() {
    const code = this.$code?.textContent?.trim() ?? '';
    try {
      await navigator.clipboard.writeText(code);
      this.say(t('Copied to the clipboard.'));
    } catch {
      this.selectCode();
      this.say(t('Press Ctrl+C (or ⌘+C) to copy the selected code.'));
    }
  }

  selectCode() {
    if (!this.$code) return;
    const range = document.createRange();
    range.selectNodeContents(this.$code);
    const selection = window.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
  }

  /** @param {string} message */
  say(message) {
    if (this.$status) this.$status.textContent = message;
  }

  destroy() {
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.listeners.abort();
  }
}
