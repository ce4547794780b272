/**
 * Practice mode of the annotator page (templates/training/practice.html, docs/training.md).
 *
 * The worker marks errors in a practice text with the ordinary annotator; nothing is
 * saved per annotation: `PracticeStore` keeps them in the page (and in localStorage, so
 * a reload keeps them), and `Practice` sends them all at "Check my answers", then shows
 * the feedback and Try again, Next practice text, Start the task or Continue. While checks
 * remain the server sends counts only (`summary`: found x of y, marks of the wrong type,
 * marks that are no error); the list of spans and explanations comes after a pass or the
 * last check (`revealed`, docs/training.md). The latest check's answer, exactly as the
 * server sent it (counts only, or the list once revealed), is kept in localStorage too,
 * so that a reload shows the same feedback (and, after Try again, the same feedback
 * beside the answers being corrected).
 *
 * @module annotator/practice
 */

import { element, ownDirection } from '../lib/dom.mjs';
import { ApiError, requestJson } from '../lib/http.mjs';
import { t } from '../lib/i18n.mjs';
import { uuid } from './store.mjs';

/** @typedef {import('./wire.mjs').Annotation} Annotation */

/** Worker-visible text, in one place, in the page's language (lib/i18n). */
const TEXT = {
  found: t('Found'),
  missed: t('Missed'),
  wrong_category: t('Wrong error type'),
  extra: t('Not an error here'),
  errorType: t('Error type:'),
  youChose: t('You chose:'),
  otherSpan: t('It relates to:'),
  passed: t('Well done: you passed this practice text.'),
  retry: t('Not passed yet. Look at the feedback, correct your answers and check again.'),
  failed: t('You did not pass the practice, so the study ends here. Thank you for your time.'),
  score: t('Errors found: {found} of {total}. Your marks that are errors: {right} of {marks}.'),
  kinds: t('Marks with the wrong error type: {wrong}. Marks that are not errors: {extra}.'),
  checking: t('Checking your answers…'),
  offline: t('You seem to be offline. Your answers are kept: check again when you are back online.'),
  refused: t('Could not check your answers: {message}'),
  finishFirst: t('Go to the last paragraph before you check your answers.'),
};

/**
 * @param {string} template
 * @param {Record<string, string | number>} values
 * @returns {string}
 */
function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ''));
}

/**
 * The practice annotations: the interface of annotator/store's AnnotationStore, kept in
 * the page (nothing is sent until Check my answers) and in localStorage per practice text.
 */
export class PracticeStore extends EventTarget {
  /** @param {{key: string}} options */
  constructor({ key }) {
    super();
    this.key = key;
    /** @type {Map<string, Annotation>} */
    this.annotations = new Map(this.load().map((a) => [a.id, a]));
    this.failure = null;
    this.queuedPosition = null;
    this.queue = null;
    this.pending = 0;
    this.writable = true;
  }

  /** @returns {Annotation[]} */
  load() {
    try {
      const stored = JSON.parse(window.localStorage.getItem(this.key) ?? '[]');
      return Array.isArray(stored) ? stored.filter((a) => a && typeof a.id === 'string' && a.span) : [];
    } catch {
      return [];
    }
  }

  save() {
    try {
      window.localStorage.setItem(this.key, JSON.stringify([...this.annotations.values()]));
    } catch {
      // A blocked or full storage only means a reload starts the practice text afresh.
    }
  }

  /**
   * @param {Omit<Annotation, 'id' | 'created_at'>} fields
   * @returns {Annotation | null}
   */
  add(fields) {
    if (!this.writable) return null;
    const annotation = { id: uuid(), ...fields, created_at: new Date().toISOString() };
    this.annotations.set(annotation.id, annotation);
    this.save();
    return annotation;
  }

  /**
   * @param {string} id
   * @returns {Annotation | null}
   */
  remove(id) {
    const annotation = this.annotations.get(id);
    if (!annotation || !this.writable) return null;
    this.annotations.delete(id);
    this.save();
    return annotation;
  }

  /** The wire form of every practice annotation, for Check my answers. */
  answers() {
    return [...this.annotations.values()].map(({ id, category, span, paired_span, comment }) => ({
      id,
      category,
      span,
      paired_span: paired_span ?? null,
      comment: comment ?? null,
    }));
  }

  /** Forget the stored copy: this practice text is over. */
  clear() {
    try {
      window.localStorage.removeItem(this.key);
    } catch {
      // nothing kept, nothing to clear
    }
  }

  savePosition() {}

  settled() {
    return Promise.resolve();
  }

  dropPositions() {}

  flush() {}

  destroy() {}
}

/**
 * @typedef {object} PracticeOptions
 * @property {string} check the URL of POST /api/sessions/<token>/training
 * @property {string} document_id
 * @property {number} attempts_left
 */

/**
 * @typedef {object} AnnotatorLike the parts of annotator/annotator's Annotator used here
 * @property {HTMLElement} $root
 * @property {PracticeStore} store
 * @property {number} position
 * @property {number} total
 * @property {boolean} busy
 * @property {{csrf_token: string, token: string}} boot
 * @property {Map<string, {name: string}>} categories
 * @property {() => boolean} hasUnfinishedAnnotation
 * @property {(readOnly: boolean) => void} setReadOnly
 * @property {(text: string) => void} setStatus
 */

export class Practice {
  /**
   * @param {{annotator: AnnotatorLike, options: PracticeOptions, signal: AbortSignal}} args
   *   signal: the page's listeners go with it (Annotator.destroy)
   */
  constructor({ annotator, options, signal }) {
    this.annotator = annotator;
    this.options = options;
    this.checking = false;
    this.over = false;
    const $root = annotator.$root;
    const $ = (/** @type {string} */ selector) => /** @type {HTMLElement} */ ($root.querySelector(selector));
    this.$check = /** @type {HTMLButtonElement} */ ($('.js-check'));
    this.$feedback = $('.js-feedback');
    this.$heading = $('#feedback-heading');
    this.$result = $('.js-feedback-result');
    this.$score = $('.js-feedback-score');
    this.$hidden = $('.js-feedback-hidden');
    this.$list = $('.js-feedback-list');
    this.$retry = $('.js-retry');
    this.$next = /** @type {HTMLAnchorElement} */ ($('.js-practice-next'));
    this.$more = /** @type {HTMLAnchorElement} */ ($('.js-practice-more'));
    this.$end = /** @type {HTMLAnchorElement} */ ($('.js-practice-end'));
    this.$attemptsLeft = $('.js-attempts-left');
    /** localStorage key of the latest check's answer on this practice text */
    this.feedbackKey = `falte:practice-feedback:${annotator.boot.token}:${options.document_id}`;
    /** @type {any} the answer shown now */
    this.shown = null;
    this.onClick = (/** @type {MouseEvent} */ event) => {
      const $button = /** @type {HTMLElement} */ (event.target).closest('button');
      if (!$button || /** @type {HTMLButtonElement} */ ($button).disabled) return;
      if ($button.matches('.js-check')) this.check();
      else if ($button.matches('.js-retry')) this.retry();
    };
    $root.addEventListener('click', this.onClick, { signal });
  }

  /** Called whenever the annotator redraws its navigation. */
  render() {
    if (!this.$check) return;
    const last = this.annotator.position === this.annotator.total - 1;
    this.$check.disabled = this.over || this.checking || this.annotator.busy || !last;
    this.$check.title = last ? '' : TEXT.finishFirst;
  }

  async check() {
    if (this.checking || this.over || this.annotator.hasUnfinishedAnnotation()) return;
    this.checking = true;
    this.render();
    this.annotator.setStatus(TEXT.checking);
    let result;
    try {
      result = await requestJson(this.options.check, {
        method: 'POST',
        body: { document_id: this.options.document_id, annotations: this.annotator.store.answers() },
        csrfToken: this.annotator.boot.csrf_token,
      });
    } catch (error) {
      this.checking = false;
      const offline = error instanceof ApiError && error.status === 0;
      const message = error instanceof Error ? error.message : String(error);
      this.annotator.setStatus(offline ? TEXT.offline : fill(TEXT.refused, { message }));
      this.render();
      return;
    }
    this.checking = false;
    this.annotator.setStatus('');
    this.show(result);
  }

  /**
   * Show the feedback and what comes next.
   * @param {any} result the JSON answer of the check
   * @param {{restored?: boolean}} [options] restored: shown again after a reload (the
   *   focus and the view stay where the page put them)
   */
  show(result, { restored = false } = {}) {
    this.over = true;
    this.shown = result;
    this.annotator.store.writable = false;
    this.annotator.setReadOnly(true);
    if (result.passed || result.failed) {
      this.annotator.store.clear();
      this.keep(null);
    } else if (!restored) {
      this.keep({ result });
    }
    this.$attemptsLeft.textContent = String(result.attempts_left);
    this.$result.textContent = result.passed ? TEXT.passed : result.failed ? TEXT.failed : TEXT.retry;
    const counts = result.summary;
    const marks = this.annotator.store.annotations.size;
    const score = fill(TEXT.score, {
      found: counts.found,
      total: counts.gold,
      right: Math.max(marks - counts.extra - counts.wrong_category, 0),
      marks,
    });
    const kinds = fill(TEXT.kinds, { wrong: counts.wrong_category, extra: counts.extra });
    this.$score.textContent = result.revealed ? score : `${score} ${kinds}`;
    this.$hidden.hidden = result.revealed;
    this.$list.hidden = !result.revealed;
    this.$list.replaceChildren(...result.feedback.map((/** @type {any} */ item) => this.item(item)));
    this.$retry.hidden = result.passed || result.failed;
    const go = result.failed ? this.$end : result.finished ? this.$next : result.passed ? this.$more : null;
    for (const $link of [this.$next, this.$more, this.$end]) $link.hidden = $link !== go;
    if (go && result.next_url) go.href = result.next_url;
    this.$feedback.hidden = false;
    this.render();
    if (restored) return;
    this.$heading.focus();
    this.$feedback.scrollIntoView({ block: 'start' });
  }

  /**
   * Keep the latest check's answer for a reload (null: forget it).
   * @param {{result: any, retrying?: boolean} | null} saved
   */
  keep(saved) {
    try {
      if (saved) window.localStorage.setItem(this.feedbackKey, JSON.stringify(saved));
      else window.localStorage.removeItem(this.feedbackKey);
    } catch {
      // A blocked or full storage only means a reload shows no feedback.
    }
  }

  /** After a reload: the feedback of the latest check again, as it was left. */
  restore() {
    let saved = null;
    try {
      saved = JSON.parse(window.localStorage.getItem(this.feedbackKey) ?? 'null');
    } catch {
      return;
    }
    if (!saved?.result?.summary || !Array.isArray(saved.result.feedback)) return;
    this.show(saved.result, { restored: true });
    if (saved.retrying) this.retry({ restored: true });
  }

  /**
   * One feedback item: what it is, the span, the error type, the explanation.
   * @param {any} item
   * @returns {HTMLLIElement}
   */
  item(item) {
    const $item = element('li', `feedback__item feedback__item--${item.kind}`);
    $item.dataset.kind = item.kind;
    const $kind = element('strong', 'feedback__kind', TEXT[/** @type {keyof TEXT} */ (item.kind)] ?? item.kind);
    $item.append($kind, ' ', ownDirection('q', item.span.text, 'feedback__span'));
    const name = (/** @type {string} */ key) => this.annotator.categories.get(key)?.name ?? key;
    // The label is the interface's; the category name and the explanation come from the
    // taxonomy and the practice text, each in its own direction (lib/direction).
    const line = (/** @type {string} */ label, /** @type {string} */ value) => {
      const $line = element('span', 'feedback__line');
      $line.append(label, ' ', ownDirection('span', value));
      $item.append($line);
    };
    if (item.kind === 'extra') line(TEXT.youChose, name(item.category));
    else line(TEXT.errorType, name(item.category));
    if (item.chosen) line(TEXT.youChose, name(item.chosen));
    if (item.paired_span && item.kind !== 'found') line(TEXT.otherSpan, `“${item.paired_span.text}”`);
    if (item.explanation) $item.append(ownDirection('span', item.explanation, 'feedback__explanation'));
    return $item;
  }

  /**
   * Try again: the same text, the worker's answers kept to correct, the feedback beside.
   * @param {{restored?: boolean}} [options] restored: after a reload
   */
  retry({ restored = false } = {}) {
    this.over = false;
    this.annotator.store.writable = true;
    this.annotator.setReadOnly(false);
    this.$retry.hidden = true; // the feedback stays in view while the worker corrects
    this.render();
    if (restored) return;
    if (this.shown) this.keep({ result: this.shown, retrying: true });
    /** @type {HTMLElement | null} */ (this.annotator.$root.querySelector('.js-current-body'))?.focus();
  }
}
