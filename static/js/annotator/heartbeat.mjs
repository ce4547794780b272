/**
 * The annotator page's heartbeat: while the page is open and visible, it tells the server
 * about once a minute that the worker is still there (POST /api/sessions/<token>/heartbeat),
 * so that the session keeps its place in the study's quota. A session with no activity
 * for the study's `claim_minutes` gives its place to the next worker
 * (app/crowd/assignment/claims.py); a hidden page sends nothing, and when it is shown again
 * after a minute or more it sends one at once, which takes the place back.
 *
 * A heartbeat that fails is not retried: the next one, or any save, records the activity.
 *
 * @module annotator/heartbeat
 */

import { requestJson } from '../lib/http.mjs';

export const HEARTBEAT_MS = 60_000;

export class Heartbeat {
  /**
   * @param {{url: string, csrfToken: string, intervalMs?: number}} options
   */
  constructor({ url, csrfToken, intervalMs = HEARTBEAT_MS }) {
    this.url = url;
    this.csrfToken = csrfToken;
    this.intervalMs = intervalMs;
    this.sending = false;
    // Loading the page was activity already.
    this.lastSent = performance.now();
    this.onVisibility = () => {
      if (isVisible() && performance.now() - this.lastSent >= this.intervalMs) this.send();
    };
    this.listeners = new AbortController();
    document.addEventListener('visibilitychange', this.onVisibility, { signal: this.listeners.signal });
    this.timer = window.setInterval(() => {
      if (isVisible()) this.send();
    }, this.intervalMs);
  }

  async send() {
    if (this.sending) return;
    this.sending = true;
    this.lastSent = performance.now();
    try {
      await requestJson(this.url, { method: 'POST', body: {}, csrfToken: this.csrfToken });
    } catch {
      // Nothing to tell the worker: their work is saved by its own requests.
    } finally {
      this.sending = false;
    }
  }

  destroy() {
    window.clearInterval(this.timer);
    this.listeners.abort();
  }
}

/**
 * The heartbeat of a page that has a session to keep; null for a preview or a read-only page.
 * @param {{url?: string | null, csrfToken?: string | null, enabled: boolean}} options
 * @returns {Heartbeat | null}
 */
export function startHeartbeat({ url, csrfToken, enabled }) {
  return enabled && url && csrfToken ? new Heartbeat({ url, csrfToken }) : null;
}

function isVisible() {
  return document.visibilityState === 'visible';
}
