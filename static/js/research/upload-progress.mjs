/**
 * Progress of the console's document uploads (`data-module="upload-progress"`,
 * templates/studies/documents.html).
 *
 * Each unfinished upload (`[data-status-url]`) is polled every POLL_MS: its `.js-bar`
 * progress element and `.js-text` live region (announced politely) show the documents
 * stored of all; once one finishes, the page reloads to show its result and the
 * documents. Without JavaScript the page refreshes itself (a <noscript> meta refresh).
 *
 * @module research/upload-progress
 */

const POLL_MS = 1000;

/** @typedef {{status: string, finished: boolean, done: number, total: number}} UploadState */

export default class UploadProgress {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.$root = $root;
    /** @type {number | undefined} */
    this.timer = undefined;
    this.stopped = false;
    this.schedule();
  }

  schedule() {
    if (this.stopped) return;
    this.timer = window.setTimeout(() => this.poll(), POLL_MS);
  }

  async poll() {
    const $uploads = /** @type {HTMLElement[]} */ ([...this.$root.querySelectorAll('[data-status-url]')]);
    if ($uploads.length === 0) return;
    let finished = false;
    for (const $upload of $uploads) {
      try {
        const response = await fetch($upload.dataset.statusUrl ?? '', {
          headers: { Accept: 'application/json' },
          credentials: 'same-origin',
        });
        if (!response.ok) continue;
        /** @type {UploadState} */
        const state = await response.json();
        finished ||= state.finished;
        this.show($upload, state);
      } catch {
        // The network dropped a poll: the next one tries again.
      }
    }
    if (finished) {
      window.location.reload();
      return;
    }
    this.schedule();
  }

  /**
   * @param {HTMLElement} $upload
   * @param {UploadState} state
   */
  show($upload, state) {
    const $bar = $upload.querySelector('.js-bar');
    const $text = $upload.querySelector('.js-text');
    if ($bar instanceof HTMLProgressElement && state.total > 0) {
      $bar.max = state.total;
      $bar.value = state.done;
      $bar.removeAttribute('aria-valuetext');
    }
    if (!($text instanceof HTMLElement)) return;
    let message = 'Waiting for the queue.';
    if (state.status === 'checking') message = 'Checking the files.';
    if (state.status === 'storing') message = `Stored ${state.done} of ${state.total} documents.`;
    if (state.finished) message = 'Finished: loading the result.';
    if ($text.textContent !== message) $text.textContent = message;
  }

  destroy() {
    this.stopped = true;
    window.clearTimeout(this.timer);
  }
}
