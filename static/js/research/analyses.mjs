/**
 * The Analyses page while an analysis is being computed (`data-module="analyses"`).
 *
 * When the page shows something pending (`[data-analysis-pending]`), it asks the root's
 * `data-status-url` (/research/analyses/status, the keys of the page's address) every
 * `data-poll-ms` milliseconds whether everything is ready, says so in the page's
 * `.js-analyses-status` live region, and reloads the page, which then shows the results.
 * Without JavaScript the pending notice's Refresh link does the same. A failed request is
 * tried again at the next tick; polling slows down after a few minutes.
 *
 * @module research/analyses
 */

import { requestJson } from '../lib/http.mjs';

const SLOWER_AFTER_TICKS = 90;

export default class AnalysesPoll {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.$root = $root;
    this.$status = /** @type {HTMLElement | null} */ ($root.querySelector('.js-analyses-status'));
    this.url = $root.dataset.statusUrl ?? '';
    this.pollMs = Number($root.dataset.pollMs) || 2000;
    this.ticks = 0;
    /** @type {number | undefined} */
    this.timer = undefined;
    this.requests = new AbortController();
    if (this.url && $root.querySelector('[data-analysis-pending]')) this.schedule();
  }

  schedule() {
    const delay = this.ticks > SLOWER_AFTER_TICKS ? this.pollMs * 5 : this.pollMs;
    this.timer = window.setTimeout(() => this.tick(), delay);
  }

  async tick() {
    this.ticks += 1;
    try {
      const answer = await requestJson(this.url, { signal: this.requests.signal });
      if (answer?.ready) {
        if (this.$status) this.$status.textContent = 'The analysis is ready: showing it.';
        window.location.reload();
        return;
      }
    } catch (error) {
      if (this.requests.signal.aborted) return;
      // The next tick asks again (a server restarting, a moment offline).
    }
    this.schedule();
  }

  destroy() {
    window.clearTimeout(this.timer);
    this.requests.abort();
  }
}
