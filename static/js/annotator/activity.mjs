/**
 * Active time on the current paragraph: a stopwatch that runs only while the tab is
 * visible (the Page Visibility API), read and restarted by each move. The position PUT
 * carries the reading as `active_seconds` for the paragraph being left; the server adds
 * it to that paragraph's timing (app/annotate/timings.py), capped at the time shown.
 */
export class ActivityTimer {
  /**
   * @param {{doc?: Document, now?: () => number}} [options] `now` in milliseconds (tests).
   */
  constructor({ doc = document, now = () => performance.now() } = {}) {
    this.doc = doc;
    this.now = now;
    /** Milliseconds counted since the last take(). */
    this.elapsed = 0;
    /** When the current visible stretch began; null while hidden. */
    this.since = doc.hidden ? null : now();
    this.listeners = new AbortController();
    doc.addEventListener('visibilitychange', () => this.update(), { signal: this.listeners.signal });
  }

  /** Stop counting when the tab is hidden; start again when it shows. */
  update() {
    if (this.doc.hidden && this.since !== null) {
      this.elapsed += this.now() - this.since;
      this.since = null;
    } else if (!this.doc.hidden && this.since === null) {
      this.since = this.now();
    }
  }

  /**
   * Seconds of visible time since the last call (one decimal), and start again from 0.
   * @returns {number}
   */
  take() {
    const running = this.since === null ? 0 : this.now() - this.since;
    const seconds = Math.round((this.elapsed + running) / 100) / 10;
    this.elapsed = 0;
    this.since = this.doc.hidden ? null : this.now();
    return seconds;
  }

  destroy() {
    this.listeners.abort();
  }
}
