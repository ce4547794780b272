/**
 * The validator page: one item at a time, its document with the span(s) highlighted,
 * and the buttons Agree / Partially agree / Disagree.
 *
 * Each judgment is queued in localStorage (lib/sync-queue) before it is sent, and
 * retried until the server answers, so a reload or a lost connection loses nothing; the
 * next item is asked for only once the judgment is stored. All text from the server is
 * set with textContent (paragraphs through lib/highlight's renderParagraph).
 *
 * @module validator/validator
 */

import { element, ownDirection } from '../lib/dom.mjs';
import { ApiError, pageCsrfToken, requestJson } from '../lib/http.mjs';
import { SyncQueue } from '../lib/sync-queue.mjs';
import { renderParagraph } from '../lib/highlight.mjs';
import { followSoon } from '../lib/follow.mjs';
import { isMturkAssignment, mturkForm } from '../lib/mturk.mjs';
import { t } from '../lib/i18n.mjs';

// The highlights' colours, base.css's (the quotes beside the text share them).
const SPAN_COLOR = 'var(--span-fill)';
const PAIRED_COLOR = 'var(--paired-fill)';
const RETRY_MS = 3000;
/** Keys for the verdicts, shown on the buttons (aria-hidden) and in aria-keyshortcuts. */
const VERDICT_KEYS = /** @type {Record<string, string>} */ ({ 1: 'agree', 2: 'partial', 3: 'disagree' });
const TEXT_FIELDS = 'input:not([type="checkbox"]):not([type="radio"]), textarea, select, [contenteditable]';

/**
 * @typedef {object} Span
 * @property {number} paragraph_id
 * @property {number} start
 * @property {number} end
 * @property {string} text
 */

/**
 * @typedef {object} Item
 * @property {string} id
 * @property {{id: string, title: string | null, paragraphs: {paragraph_id: number, text: string}[]}} document
 * @property {Span} span
 * @property {Span | null} paired_span
 * @property {string[]} labels
 * @property {string[]} label_names
 * @property {(string | null)[]} [label_descriptions]
 * @property {string | null} question
 * @property {string | null} comment
 * @property {'question' | 'category'} [protocol]
 */

export default class Validator {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.$root = $root;
    /** @type {{next_url: string, judgments_url: string, storage_key: string}} */
    this.config = JSON.parse($root.dataset.config || '{}');
    this.csrfToken = pageCsrfToken();
    /** @type {Item | null} */
    this.item = null;
    this.busy = false;
    /** @type {number | undefined} */
    this.retryTimer = undefined;
    this.instructionsShown = false;
    /** A judgment was stored from this page: finishing now sends a Prolific validator back. */
    this.judgedHere = false;
    /** @type {number | undefined} */
    this.followTimer = undefined;

    this.$progress = this.find('.js-progress');
    this.$work = this.find('.js-work');
    this.$done = this.find('.js-done');
    this.$document = this.find('.js-document');
    this.$documentTitle = this.find('.js-document-title');
    this.$status = this.find('.js-status');
    this.$reasonsError = this.find('.js-reasons-error');
    this.$explanation = /** @type {HTMLTextAreaElement} */ (this.find('.js-explanation'));
    this.$instructions = this.find('.js-instructions');
    this.$toggle = this.find('.js-toggle-instructions');

    this.queue = new SyncQueue({ storageKey: this.config.storage_key, csrfToken: this.csrfToken });
    // Every listener this page adds goes with this controller (destroy()).
    this.listeners = new AbortController();
    const { signal } = this.listeners;
    $root.addEventListener('click', (event) => this.handleClick(event), { signal });
    $root.addEventListener('change', () => this.handleChange(), { signal });
    document.addEventListener('keydown', (event) => this.handleKey(event), { signal });
    this.queue.addEventListener('acknowledged', () => this.afterSaved(), { signal });
    this.queue.addEventListener(
      'rejected',
      (event) => this.afterRejected(/** @type {CustomEvent} */ (event).detail.error),
      { signal },
    );
    this.queue.addEventListener('change', (event) => this.showQueue(/** @type {CustomEvent} */ (event).detail), {
      signal,
    });

    if (this.queue.pending) {
      // Judgments from before a reload are sent first; the next item follows.
      this.setStatus(t('Saving your last judgment…'));
      this.busy = true;
      this.queue.flush(true);
    } else {
      this.loadNext();
    }
  }

  /**
   * @param {string} selector
   * @returns {HTMLElement}
   */
  find(selector) {
    const $el = /** @type {HTMLElement | null} */ (this.$root.querySelector(selector));
    if (!$el) throw new Error(`validator: missing ${selector}`);
    return $el;
  }

  /** @param {string} text */
  setStatus(text, isError = false) {
    this.$status.textContent = text;
    this.$status.classList.toggle('status--error', isError);
  }

  /** @param {MouseEvent} event */
  handleClick(event) {
    const $target = /** @type {HTMLElement} */ (event.target);
    const $verdict = /** @type {HTMLButtonElement | null} */ ($target.closest('.js-verdict'));
    if ($verdict) {
      this.judge($verdict.dataset.verdict ?? '');
      return;
    }
    if ($target.closest('.js-toggle-instructions')) this.showInstructions(this.$instructions.hidden);
  }

  /** @param {boolean} open */
  showInstructions(open) {
    this.$instructions.hidden = !open;
    this.$toggle.setAttribute('aria-expanded', String(open));
  }

  /**
   * Keys 1, 2 and 3 give the verdicts, except while typing (the explanation field).
   * @param {KeyboardEvent} event
   */
  handleKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const verdict = VERDICT_KEYS[event.key];
    if (!verdict || !this.item || this.$work.hidden) return;
    if (event.target instanceof Element && event.target.closest(TEXT_FIELDS)) return;
    event.preventDefault();
    this.judge(verdict);
  }

  handleChange() {
    if (this.selectedReasons().length) this.$reasonsError.hidden = true;
  }

  /** @returns {HTMLInputElement[]} the reason boxes of the current item's protocol */
  reasonBoxes() {
    const $set = this.$root.querySelector('.js-reasons:not([hidden])');
    return /** @type {HTMLInputElement[]} */ ([...($set?.querySelectorAll('.js-reason') ?? [])]);
  }

  /** @returns {string[]} */
  selectedReasons() {
    return this.reasonBoxes()
      .filter(($box) => $box.checked)
      .map(($box) => $box.value);
  }

  /** @param {boolean} disabled */
  setButtonsDisabled(disabled) {
    for (const $button of this.$root.querySelectorAll('.js-verdict')) {
      /** @type {HTMLButtonElement} */ ($button).disabled = disabled;
    }
  }

  /** @param {string} verdict */
  judge(verdict) {
    if (!this.item || this.busy) return;
    const reasons = this.selectedReasons();
    if (verdict !== 'agree' && !reasons.length) {
      this.$reasonsError.hidden = false;
      this.reasonBoxes()[0]?.focus();
      return;
    }
    const explanation = this.$explanation.value.trim();
    this.busy = true;
    this.setButtonsDisabled(true);
    this.setStatus(t('Saving…'));
    this.queue.enqueue({
      kind: 'judgment',
      id: this.item.id,
      method: 'POST',
      url: this.config.judgments_url,
      body: { item_id: this.item.id, verdict, reasons, explanation: explanation || null },
    });
  }

  /** @param {{pending: number, offline: boolean}} detail */
  showQueue(detail) {
    if (!detail.pending) return;
    if (this.queue.lastError) {
      this.setStatus(
        detail.offline
          ? t('Not saved yet: you seem to be offline. It will be sent when the connection is back.')
          : t('Not saved yet: the server did not answer. Retrying…'),
        true,
      );
    }
  }

  afterSaved() {
    this.judgedHere = true;
    if (this.queue.pending) return;
    this.setStatus(t('Saved.'));
    this.loadNext();
  }

  /** @param {ApiError} error */
  afterRejected(error) {
    if (!this.item || error.status === 409 || error.code === 'not_available' || error.status === 404) {
      // Already judged (e.g. in another tab) or no longer ours: move on.
      this.setStatus(error.message, true);
      this.loadNext();
      return;
    }
    this.busy = false;
    this.setButtonsDisabled(false);
    this.setStatus(t('Not saved: {error}', { error: error.message }), true);
  }

  async loadNext() {
    window.clearTimeout(this.retryTimer);
    this.busy = true;
    this.setButtonsDisabled(true);
    let answer;
    try {
      answer = await requestJson(this.config.next_url);
    } catch (error) {
      const message = error instanceof ApiError ? error.message : String(error);
      this.setStatus(t('Could not load the next item ({error}). Retrying…', { error: message }), true);
      this.retryTimer = window.setTimeout(() => this.loadNext(), RETRY_MS);
      return;
    }
    this.showProgress(answer.progress, answer.item);
    if (answer.item) {
      this.showItem(answer.item);
      if (!this.instructionsShown && answer.progress.done === 0) this.showInstructions(true);
      this.instructionsShown = true;
      this.busy = false;
      this.setButtonsDisabled(false);
    } else {
      this.showDone(answer);
    }
  }

  /**
   * @param {{done: number, total: number}} progress
   * @param {Item | null} item
   */
  showProgress(progress, item) {
    this.$progress.textContent = item
      ? t('Item {n} of {total}', { n: progress.done + 1, total: progress.total })
      : t('{done} of {total} done', { done: progress.done, total: progress.total });
  }

  /** @param {Item} item */
  showItem(item) {
    const isNew = this.item?.id !== item.id;
    this.item = item;
    this.$work.hidden = false;
    this.$done.hidden = true;
    this.$documentTitle.textContent = item.document.title || t('Document');
    const $paragraphs = item.document.paragraphs.map((paragraph) => {
      const $p = element('p', 'validator__paragraph');
      $p.dataset.paragraph = String(paragraph.paragraph_id);
      // The document's language sets the direction (an Arabic paragraph opening with a
      // Latin name stays right to left); without one, each paragraph takes its own.
      $p.dir = item.document.direction ?? 'auto';
      if (item.document.language) $p.lang = item.document.language;
      renderParagraph($p, paragraph.text, this.highlightsFor(paragraph.paragraph_id, item));
      return $p;
    });
    this.$document.replaceChildren(...$paragraphs);
    this.setText('.js-span-text', item.span.text);
    this.setRow('.js-paired-row', '.js-paired-text', item.paired_span?.text ?? null);
    this.setRow('.js-question-row', '.js-question', item.question);
    this.setRow('.js-comment-row', '.js-comment', item.comment);
    const $labels = this.find('.js-labels');
    $labels.replaceChildren(
      // Taxonomy text: each name in its own direction inside any interface.
      ...item.label_names.map((name) => ownDirection('li', name, 'validator__label')),
    );
    for (const $row of this.$root.querySelectorAll('.js-labels-row')) {
      /** @type {HTMLElement} */ ($row).hidden = !item.label_names.length;
    }
    // What each error type means, from the taxonomy (named when there are several).
    const described = item.label_names
      .map((name, index) => [name, item.label_descriptions?.[index]])
      .filter(([, description]) => description);
    this.setText(
      '.js-label-descriptions',
      described.length === 1
        ? String(described[0][1])
        : described.map(([name, description]) => `${name}: ${description}`).join(' '),
    );
    this.showProtocol(item.protocol ?? (item.question ? 'question' : 'category'));
    if (isNew) {
      for (const $box of this.$root.querySelectorAll('.js-reason')) /** @type {HTMLInputElement} */ ($box).checked = false;
      this.$explanation.value = '';
      this.$reasonsError.hidden = true;
      // "Saved." was about the previous item.
      this.setStatus('');
    }
    const $mark = this.$document.querySelector('mark.validator__hl--span');
    $mark?.scrollIntoView({ block: 'center' });
  }

  /**
   * Show the reasons and instructions of the item's protocol (app/validation/reasons.py).
   * @param {string} protocol
   */
  showProtocol(protocol) {
    // The page has the sets of every protocol among the round's items (never none).
    for (const selector of ['.js-reasons', '.js-instructions-protocol']) {
      const $sets = /** @type {HTMLElement[]} */ ([...this.$root.querySelectorAll(selector)]);
      const $shown = $sets.find(($set) => $set.dataset.protocol === protocol) ?? $sets[0];
      for (const $set of $sets) $set.hidden = $set !== $shown;
    }
  }

  /**
   * @param {number} paragraphId
   * @param {Item} item
   */
  highlightsFor(paragraphId, item) {
    const highlights = [];
    if (item.span.paragraph_id === paragraphId) {
      highlights.push({
        id: 'span',
        start: item.span.start,
        end: item.span.end,
        color: SPAN_COLOR,
        className: 'validator__hl validator__hl--span',
        title: t('Highlighted span'),
      });
    }
    const paired = item.paired_span;
    if (paired && paired.paragraph_id === paragraphId) {
      highlights.push({
        id: 'paired',
        start: paired.start,
        end: paired.end,
        color: PAIRED_COLOR,
        className: 'validator__hl validator__hl--paired',
        title: t('Related span'),
      });
    }
    return highlights;
  }

  /**
   * @param {string} selector
   * @param {string} text
   */
  setText(selector, text) {
    this.find(selector).textContent = text;
  }

  /**
   * @param {string} rowSelector
   * @param {string} valueSelector
   * @param {string | null} text
   */
  setRow(rowSelector, valueSelector, text) {
    for (const $row of this.$root.querySelectorAll(rowSelector)) /** @type {HTMLElement} */ ($row).hidden = !text;
    this.setText(valueSelector, text ?? '');
  }

  /**
   * No item left: thanks, the code to show (the study's platform code, the session's own
   * where it has none, none where the Return link alone completes) and the way back.
   * @param {{progress: {done: number, total: number}, completion_code: string | null, shown_code?: string | null,
   *   completion_url: string | null, mturk?: {submit_to: string, assignment_id: string} | null}} answer
   */
  showDone(answer) {
    this.item = null;
    this.$work.hidden = true;
    this.$done.hidden = false;
    const earned = Boolean(answer.completion_code);
    const shown = earned ? (answer.shown_code ?? null) : null;
    this.find('.js-code-row').hidden = !shown;
    this.setText('.js-code', shown ?? '');
    this.setText(
      '.js-done-heading',
      earned ? t('Thank you, there is nothing left for you to judge') : t('There is nothing for you to judge right now'),
    );
    this.setText(
      '.js-done-count',
      earned
        ? t('You judged {count} item(s).', { count: answer.progress.done })
        : t('Other validators are working on the remaining items. Please come back later.'),
    );
    const $next = this.find('.js-done-next');
    $next.hidden = !answer.completion_url;
    if (answer.completion_url) {
      const $link = this.find('.js-done-link');
      $link.setAttribute('href', answer.completion_url);
      // Right after the last judgment (not when a finished session is reopened), a
      // Prolific validator is sent back as annotators are (lib/follow).
      window.clearTimeout(this.followTimer);
      if (earned && this.judgedHere && !isMturkAssignment(answer.mturk)) this.followTimer = followSoon($link);
    }
    const $mturk = this.find('.js-done-mturk');
    $mturk.querySelector('form')?.remove();
    const toMturk = earned && isMturkAssignment(answer.mturk);
    $mturk.hidden = !toMturk;
    if (toMturk && answer.mturk) $mturk.append(mturkForm(answer.mturk, answer.completion_code ?? ''));
    this.setStatus('');
  }

  destroy() {
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.followTimer);
    this.listeners.abort();
    this.queue.destroy();
  }
}
