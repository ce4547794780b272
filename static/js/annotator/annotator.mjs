/**
 * The annotator page component (`data-module="annotator"`): reading the document one
 * paragraph at a time and recording errors, after FALTE's crowd workflow.
 *
 * Everything the worker does is applied to the page at once (optimistically) and sent
 * through a persistent SyncQueue, so nothing is lost to a reload or a lost connection.
 *
 * @module annotator/annotator
 */

import { ApiError, requestJson } from '../lib/api.mjs';
import { ActivityTimer } from './activity.mjs';
import { completionContent } from './completion.mjs';
import { CorefCues } from './coref.mjs';
import { DraftStore } from './draft.mjs';
import { KeyboardSelection } from './keyboard.mjs';
import { startHeartbeat } from './heartbeat.mjs';
import { InstructionsPanel, isTouchOnly } from './panels.mjs';
import { readSelection } from './selection.mjs';
import { Practice, PracticeStore } from './practice.mjs';
import { isProblem, statusText } from './status.mjs';
import { Steps } from './steps.mjs';
import { AnnotationStore } from './store.mjs';
import { AnnotationTable } from './table.mjs';
import { DocumentView } from './view.mjs';

/** @typedef {import('./table.mjs').Annotation} Annotation */
/** @typedef {import('./table.mjs').WireSpan} WireSpan */

const HINT_MS = 6000;
const TEXT_FIELDS = 'input, textarea, select, [contenteditable=""], [contenteditable="true"]';

export default class Annotator {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.$root = $root;
    /** @type {any} */
    const boot = JSON.parse($root.dataset.bootstrap ?? '{}');
    this.boot = boot;
    this.api = boot.api ?? {};
    this.total = boot.document.total_paragraphs;
    this.furthest = boot.furthest ?? 0;
    this.status = boot.status;
    this.readOnly = Boolean(boot.read_only || boot.preview || boot.status !== 'active');
    /** How a paragraph is numbered on screen: from 1; researchers (the session viewer) also
     * read its export id, which counts from 0 (templates/research/_paragraphs.html). */
    this.paragraphName = (/** @type {number} */ id) => (boot.viewer ? `${id + 1} (id ${id})` : String(id + 1));
    this.busy = false;
    /** @type {string} a navigation message shown instead of the save state */
    this.statusText = '';

    const $ = (/** @type {string} */ selector) => /** @type {HTMLElement} */ ($root.querySelector(selector));
    this.$form = /** @type {HTMLFormElement} */ ($('.js-form'));
    this.$status = $('.js-status');
    this.$hint = $('.js-hint');
    this.$progress = $('.js-progress');
    this.$previous = /** @type {HTMLButtonElement} */ ($('.js-previous'));
    this.$next = /** @type {HTMLButtonElement} */ ($('.js-next'));
    this.$submit = /** @type {HTMLButtonElement} */ ($('.js-submit'));
    this.$completion = $('.js-completion');
    this.$submitQuestion = $('.js-submit-question');

    /** @type {Map<string, any>} */
    this.categories = new Map(boot.taxonomy.categories.map((/** @type {any} */ c) => [c.key, c]));
    this.shortcuts = new Map(
      boot.taxonomy.categories
        .filter((/** @type {any} */ c) => c.shortcut)
        .map((/** @type {any} */ c) => [c.shortcut, c.key]),
    );
    this.view = new DocumentView({
      $context: $('.js-context-body'),
      $contextEmpty: $('.js-context-empty'),
      $current: $('.js-current-body'),
      categories: this.categories,
    });
    this.view.addParagraphs(boot.document.paragraphs);
    this.table = new AnnotationTable({
      $body: $('.js-annotations'),
      $empty: $('.js-annotations-empty'),
      categories: this.categories,
      paragraphText: (id) => this.view.text(id),
      paragraphName: this.paragraphName,
    });
    this.steps = new Steps({
      $form: this.$form,
      categories: this.categories,
      commentRequired: Boolean(boot.taxonomy.comment?.required),
      commentLabel: boot.taxonomy.comment?.label ?? '',
      maxCommentLength: boot.max_comment_length,
      range: (span) => this.view.range(span),
      onChange: () => this.saveDraft(),
    });
    // Practice (templates/training/practice.html) keeps its draft apart from the task's.
    const draftKey = boot.practice ? `${boot.token}:practice` : boot.token;
    this.draft = new DraftStore({ token: this.readOnly ? null : draftKey });
    this.keyboard = new KeyboardSelection({
      $host: $('.js-current-body'),
      shown: () => this.view.shown(),
      current: () => this.view.element(this.position),
      onTake: (range) => this.takeRange(range),
      enabled: () => !this.readOnly,
    });
    this.coref = new CorefCues({
      $scope: $root,
      entities: boot.entities ?? [],
      paragraphs: () => this.view.shown(),
    });

    this.store = boot.practice
      ? new PracticeStore({ key: `falte:practice:${boot.token}:${boot.practice.document_id}` })
      : new AnnotationStore({
          annotations: boot.annotations,
          api: this.api,
          token: boot.token,
          csrfToken: boot.csrf_token,
          writable: !this.readOnly,
        });
    this.annotations = this.store.annotations;
    this.position = Math.min(this.store.queuedPosition ?? boot.position ?? 0, this.furthest);
    this.store.addEventListener('change', () => this.renderStatus());
    this.store.addEventListener('rejected', (event) => {
      const { annotation } = /** @type {CustomEvent} */ (event).detail;
      if (annotation) {
        this.table.remove(annotation.id);
        this.redraw(annotation);
        this.keepRefused(annotation, /** @type {CustomEvent} */ (event).detail.error);
      }
      this.renderStatus();
    });

    this.activity = new ActivityTimer();
    this.practice = boot.practice ? new Practice({ annotator: this, options: boot.practice }) : null;
    this.bindEvents();
    this.view.renderHighlights(this.annotations.values());
    this.table.renderAll([...this.annotations.values()]);
    this.view.show(this.position);
    this.steps.setReadOnly(this.readOnly);
    this.table.setReadOnly(this.readOnly);
    this.restoreDraft();
    this.instructions = new InstructionsPanel({
      $root,
      $panel: $('.js-instructions'),
      $toggle: $('.js-toggle-instructions'),
    });
    $('.js-touch-warning').hidden = !isTouchOnly();
    if (this.status === 'submitted' && boot.completion) this.showCompletion(boot.completion, false);
    this.renderNavigation();
    this.renderStatus();
    this.store.flush();
    this.heartbeat = startHeartbeat({ url: this.api.heartbeat, csrfToken: boot.csrf_token, enabled: !this.readOnly });
    // For tests and bench/long_document.py: the page is drawn and listening.
    $root.dataset.ready = 'true';
    performance.mark('annotator:ready');
  }

  bindEvents() {
    this.onClick = (/** @type {MouseEvent} */ event) => this.handleClick(event);
    this.onSubmit = (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      this.addAnnotation();
    };
    this.onInput = () => this.steps.commentChanged();
    this.onFocusIn = (/** @type {FocusEvent} */ event) => {
      const target = /** @type {HTMLElement} */ (event.target);
      if (target.matches('.js-span')) this.steps.setTarget('span');
      if (target.matches('.js-paired-span')) this.steps.setTarget('paired');
      // A row reached by keyboard lights up its spans, as hovering it does.
      const rowId = /** @type {HTMLElement | null} */ (target.closest('.js-annotation-row'))?.dataset.annotation;
      DocumentView.link(this.$root, rowId ? [rowId] : []);
    };
    // The selection is final at mouseup: read it at once, before a following key press or
    // focus change (e.g. into the comment field) can replace it.
    this.onMouseUp = () => this.captureSelection();
    this.onKeyUp = (/** @type {KeyboardEvent} */ event) => {
      if (event.shiftKey && !isTextField(event.target)) this.captureSelection();
    };
    this.onKeyDown = (/** @type {KeyboardEvent} */ event) => this.handleKey(event);
    this.onOver = (/** @type {MouseEvent} */ event) => this.linkHover(event, true);
    this.onOut = (/** @type {MouseEvent} */ event) => this.linkHover(event, false);
    this.onBeforeUnload = (/** @type {BeforeUnloadEvent} */ event) => {
      if (this.store.pending > 0) {
        event.preventDefault();
        event.returnValue = '';
      }
    };
    this.$root.addEventListener('click', this.onClick);
    this.$root.addEventListener('submit', this.onSubmit);
    this.$root.addEventListener('input', this.onInput);
    this.$root.addEventListener('focusin', this.onFocusIn);
    this.$root.addEventListener('mouseover', this.onOver);
    this.$root.addEventListener('mouseout', this.onOut);
    // Selections may end outside the root (a drag past the page edge); keys go to the body.
    document.addEventListener('mouseup', this.onMouseUp);
    document.addEventListener('keyup', this.onKeyUp);
    document.addEventListener('keydown', this.onKeyDown);
    window.addEventListener('beforeunload', this.onBeforeUnload);
    // A "you seem to be offline" message is stale once the connection is back.
    this.onOnline = () => this.setStatus('');
    window.addEventListener('online', this.onOnline);
  }

  /** @param {MouseEvent} event */
  handleClick(event) {
    const $target = /** @type {HTMLElement} */ (event.target);
    const $button = /** @type {HTMLButtonElement | null} */ ($target.closest('button'));
    if (!$button || $button.disabled) return;
    const rowId = /** @type {HTMLElement | null} */ ($button.closest('.js-annotation-row'))?.dataset.annotation;
    if ($button.matches('.js-category')) this.steps.choose($button.dataset.category ?? '');
    else if ($button.matches('.js-clear')) this.steps.clear();
    else if ($button.matches('.js-previous')) this.goTo(this.position - 1);
    else if ($button.matches('.js-next')) this.goTo(this.position + 1);
    else if ($button.matches('.js-submit')) this.askToSubmit();
    else if ($button.matches('.js-submit-confirm')) this.submit();
    else if ($button.matches('.js-submit-cancel')) this.cancelSubmit();
    else if ($button.matches('.js-show') && rowId) this.showInText(rowId);
    else if ($button.matches('.js-toggle-instructions')) this.instructions.toggle();
    else if ($button.matches('.js-remove') && rowId) this.table.askToConfirm(rowId);
    else if ($button.matches('.js-remove-confirm') && rowId) this.removeAnnotation(rowId);
    else if ($button.matches('.js-remove-cancel') && rowId) this.table.cancelConfirm(rowId);
  }

  /** @param {KeyboardEvent} event */
  handleKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (isTextField(event.target)) return;
    if (event.key === 'Enter') {
      // Enter on a button activates that button; elsewhere it adds a complete annotation.
      const target = /** @type {HTMLElement} */ (event.target);
      if (target.closest('button, a, summary')) return;
      if (this.steps.isComplete()) {
        event.preventDefault();
        this.addAnnotation();
      }
      return;
    }
    if (event.key === 'Escape') {
      const rowId = /** @type {HTMLElement | null} */ (
        /** @type {HTMLElement} */ (event.target).closest?.('.js-annotation-row.is-confirming')
      )?.dataset.annotation;
      if (rowId) this.table.cancelConfirm(rowId);
      else if (!this.$submitQuestion.hidden) this.cancelSubmit();
      else this.steps.clear();
      return;
    }
    const key = this.shortcuts.get(event.key);
    if (key && this.steps.choose(key)) event.preventDefault();
  }

  /** Read the browser's selection into step 1 or step 3. */
  captureSelection() {
    if (this.readOnly) return;
    const selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
    const range = selection.getRangeAt(0);
    if (!range.intersectsNode(this.$root)) return;
    // Drop the browser's selection either way: the chosen span stays drawn by Steps, and a
    // refused one must not be dragged by the next mouse press.
    if (this.takeRange(range)) selection.removeAllRanges();
  }

  /**
   * Read a range of the text (a mouse or keyboard selection) into step 1 or step 3.
   * @param {Range} range
   * @returns {boolean} false when the range covers no paragraph text
   */
  takeRange(range) {
    if (this.readOnly) return false;
    const result = readSelection(range, this.view.shown(), {
      position: this.position,
      forPaired: this.steps.target === 'paired' && this.steps.needsPaired,
    });
    if (!result) return false;
    if ('refusal' in result) {
      this.hint(result.refusal);
    } else if (this.steps.target === 'paired' && this.steps.needsPaired) {
      this.steps.setPaired(result.span);
      this.hint('');
    } else {
      this.steps.setSpan(result.span);
      this.hint('');
    }
    return true;
  }

  /**
   * Show a hint under the Current Paragraph for a few seconds ('' hides it).
   * @param {string} message
   */
  hint(message) {
    window.clearTimeout(this.hintTimer);
    this.$hint.textContent = message;
    this.$hint.hidden = !message;
    if (message) this.hintTimer = window.setTimeout(() => this.hint(''), HINT_MS);
  }

  /** Step 5: record the annotation described by the form, if the server's rules allow it. */
  addAnnotation() {
    if (!this.steps.isComplete()) return;
    const problem = this.steps.problem({ text: (id) => this.view.text(id), furthest: this.furthest });
    if (problem) {
      this.steps.showError(problem);
      return;
    }
    const value = this.steps.value();
    const annotation = this.store.add(value);
    if (!annotation) return;
    this.statusText = '';
    this.redraw(annotation);
    this.table.add(annotation);
    this.steps.clear();
  }

  /**
   * The server refused an Add for good: put it back into the form (unless the worker has
   * started another or moved on) and say why next to Add.
   * @param {Annotation} annotation
   * @param {Error} error
   */
  keepRefused(annotation, error) {
    const here = annotation.span.paragraph_id === this.position;
    if (here && this.steps.isEmpty() && !this.readOnly) {
      this.steps.restore({
        span: annotation.span,
        paired: annotation.paired_span,
        category: annotation.category,
        comment: annotation.comment,
      });
      this.steps.showError(error.message);
    } else {
      this.steps.showError(`Your annotation of “${annotation.span.text}” was not saved: ${error.message}`);
    }
  }

  /** Keep the unfinished annotation for a reload (once the saved one is restored). */
  saveDraft() {
    if (this.draftRestored) this.draft.save(this.steps.draft());
  }

  /** Put back the annotation left unfinished before a reload, if it still fits the page. */
  restoreDraft() {
    const draft = this.readOnly ? null : this.draft.load();
    this.draftRestored = true;
    if (!draft) return;
    const fits = (/** @type {WireSpan | null} */ span, /** @type {boolean} */ paired) => {
      if (!span) return null;
      const inPlace = paired ? span.paragraph_id <= this.position : span.paragraph_id === this.position;
      const range = inPlace ? this.view.range(span) : null;
      return range && range.toString() === span.text ? span : null;
    };
    this.steps.restore({
      span: fits(draft.span, false),
      paired: fits(draft.paired, true),
      category: draft.category,
      comment: draft.comment,
    });
  }

  /**
   * "Show in text": the annotation's span, scrolled into view, or where to find it.
   * @param {string} id
   */
  showInText(id) {
    const annotation = this.annotations.get(id);
    if (!annotation) return;
    const paragraph = annotation.span.paragraph_id;
    if (paragraph > this.position) {
      this.hint(`This annotation is in paragraph ${this.paragraphName(paragraph)}: go forward to see it.`);
      return;
    }
    this.view.reveal(id, paragraph);
  }

  /** Submit asks first, in the page: it cannot be undone. */
  askToSubmit() {
    if (!this.canSubmit() || this.hasUnfinishedAnnotation()) return;
    this.$submitQuestion.hidden = false;
    /** @type {HTMLElement} */ (this.$submitQuestion.querySelector('.js-submit-confirm')).focus();
  }

  cancelSubmit() {
    this.$submitQuestion.hidden = true;
    this.$submit.focus();
  }

  /** @param {string} id */
  removeAnnotation(id) {
    const $row = this.table.rows.get(id)?.row;
    const annotation = this.store.remove(id);
    if (!annotation) return;
    this.statusText = '';
    this.redraw(annotation);
    const $next = $row?.nextElementSibling ?? $row?.previousElementSibling;
    this.table.remove(id);
    // Keep keyboard users in the table: the neighbouring Remove, else the heading.
    const $focus = /** @type {HTMLElement | null} */ (
      $next?.querySelector('.js-remove') ?? this.$root.querySelector('#previous-heading')
    );
    $focus?.focus();
  }

  /**
   * Re-render the paragraphs an annotation touches.
   * @param {Annotation | {span: WireSpan, paired_span: WireSpan | null}} annotation
   */
  redraw(annotation) {
    const ids = [annotation.span.paragraph_id];
    if (annotation.paired_span) ids.push(annotation.paired_span.paragraph_id);
    this.view.renderHighlights(this.annotations.values(), ids);
    this.coref.clear();
    this.steps.drawPending();
  }

  /**
   * Move to a paragraph: within those reached, at once; one further, after the server
   * has sent its text.
   * @param {number} target
   */
  async goTo(target) {
    if (target < 0 || target >= this.total || this.busy) return;
    if (this.hasUnfinishedAnnotation()) return;
    if (target > this.furthest) {
      if (this.readOnly || !this.api.position || target !== this.furthest + 1) return;
      this.busy = true;
      this.renderNavigation();
      this.setStatus('Loading the next paragraph…');
      try {
        this.store.dropPositions();
        const result = await requestJson(this.api.position, {
          method: 'PUT',
          body: { paragraph_id: target, active_seconds: this.activity.take() },
          csrfToken: this.boot.csrf_token,
        });
        this.view.addParagraphs(result.paragraphs ?? []);
        const revealed = (result.paragraphs ?? []).map((/** @type {any} */ p) => p.paragraph_id);
        this.view.renderHighlights(this.annotations.values(), revealed);
        this.furthest = Math.max(this.furthest, result.furthest ?? target);
        this.busy = false;
        this.setStatus('');
      } catch (error) {
        this.busy = false;
        const message = error instanceof ApiError && error.status === 0
          ? 'You seem to be offline. Your work is kept: click again when you are back online.'
          : `Could not load the next paragraph: ${error instanceof Error ? error.message : error}`;
        this.setStatus(message);
        this.renderNavigation();
        return;
      }
    } else if (!this.readOnly) {
      this.store.savePosition(target, { active_seconds: this.activity.take() });
    }
    this.position = target;
    this.steps.clear();
    this.hint('');
    this.coref.clear();
    this.view.show(target);
    this.steps.drawPending();
    this.renderNavigation();
    // The button pressed was disabled while the paragraph loaded, which drops the focus:
    // give it back (keyboard users), without scrolling the page the worker may have moved.
    if (document.activeElement === document.body && !this.$next.disabled) this.$next.focus({ preventScroll: true });
  }

  async submit() {
    this.$submitQuestion.hidden = true;
    if (!this.canSubmit() || !this.api.submit || this.hasUnfinishedAnnotation()) return;
    this.busy = true;
    this.renderNavigation();
    this.setStatus('Submitting…');
    try {
      const result = await requestJson(this.api.submit, { method: 'POST', body: {}, csrfToken: this.boot.csrf_token });
      this.status = 'submitted';
      this.setReadOnly(true);
      this.busy = false;
      this.setStatus('Submitted');
      this.showCompletion(result, true);
    } catch (error) {
      this.busy = false;
      this.setStatus(`Could not submit: ${error instanceof Error ? error.message : error}`);
    }
    this.renderNavigation();
  }

  /**
   * Stop (or allow again: practice's Try again) adding and removing annotations.
   * @param {boolean} readOnly
   */
  setReadOnly(readOnly) {
    this.readOnly = readOnly;
    this.$root.classList.toggle('annotator--read-only', readOnly);
    this.steps.setReadOnly(readOnly);
    this.table.setReadOnly(readOnly);
  }

  /**
   * A span and a category make an annotation the worker means to keep: say so rather than
   * drop it by moving on.
   * @returns {boolean}
   */
  hasUnfinishedAnnotation() {
    if (!(this.steps.span && this.steps.category)) return false;
    this.hint('Finish the annotation you started (Add) or Clear it before moving on.');
    return true;
  }

  canSubmit() {
    return !this.readOnly && !this.busy && this.position === this.total - 1 && this.store.pending === 0;
  }

  /**
   * @param {{completion_code: string, redirect_url?: string | null}} completion
   * @param {boolean} focus
   */
  showCompletion(completion, focus) {
    completionContent(this.$completion, completion, this.boot.mturk, { follow: focus });
    this.$completion.hidden = false;
    if (focus) {
      const $heading = /** @type {HTMLElement} */ (this.$completion.querySelector('h2'));
      $heading.tabIndex = -1;
      $heading.focus();
      this.$completion.scrollIntoView({ block: 'start' });
    }
  }

  renderNavigation() {
    this.$progress.textContent = `Paragraph ${this.paragraphName(this.position)} of ${this.total}`;
    this.$previous.disabled = this.busy || this.position <= 0;
    const nextReachable = this.readOnly ? this.position < this.furthest : this.position < this.total - 1;
    this.$next.disabled = this.busy || !nextReachable;
    this.$submit.disabled = !this.canSubmit();
    if (this.$submit.disabled && !this.busy) this.$submitQuestion.hidden = true;
    this.practice?.render();
  }

  /** @param {string} text a navigation message, or '' to show the save state again */
  setStatus(text) {
    this.statusText = text;
    this.renderStatus();
  }

  renderStatus() {
    const queue = this.store.queue;
    const text = statusText({
      message: this.statusText,
      failure: this.store.failure,
      pending: this.store.pending,
      offline: Boolean(queue?.offline),
      sending: Boolean(queue?.inFlight),
      lastError: queue?.lastError?.message ?? null,
      anythingSaved: Boolean(queue && (queue.everAcknowledged || this.annotations.size)),
    });
    if (this.$status.textContent !== text) this.$status.textContent = text;
    this.$status.classList.toggle('status--error', isProblem(text));
    this.$submit.disabled = !this.canSubmit();
  }

  /**
   * Light up an annotation's highlights (span and paired span) and its table row together.
   * @param {MouseEvent} event
   * @param {boolean} entering
   */
  linkHover(event, entering) {
    const $target = /** @type {HTMLElement} */ (event.target);
    const $source = /** @type {HTMLElement | null} */ ($target.closest('.hl[data-annotation], .js-annotation-row'));
    if (!$source) return;
    const ids = entering ? ($source.dataset.annotation ?? '').split(' ').filter(Boolean) : [];
    DocumentView.link(this.$root, ids);
  }

  destroy() {
    this.$root.removeEventListener('click', this.onClick);
    this.$root.removeEventListener('submit', this.onSubmit);
    this.$root.removeEventListener('input', this.onInput);
    this.$root.removeEventListener('focusin', this.onFocusIn);
    this.$root.removeEventListener('mouseover', this.onOver);
    this.$root.removeEventListener('mouseout', this.onOut);
    document.removeEventListener('mouseup', this.onMouseUp);
    document.removeEventListener('keyup', this.onKeyUp);
    document.removeEventListener('keydown', this.onKeyDown);
    window.removeEventListener('beforeunload', this.onBeforeUnload);
    window.removeEventListener('online', this.onOnline);
    window.clearTimeout(this.hintTimer);
    this.view.destroy();
    this.keyboard.destroy();
    this.store.destroy();
    this.heartbeat?.destroy();
    this.activity.destroy();
    this.coref.destroy();
    this.steps.destroy();
    this.practice?.destroy();
  }
}

/**
 * @param {EventTarget | null} target
 * @returns {boolean}
 */
function isTextField(target) {
  if (!(target instanceof Element) || !target.matches(TEXT_FIELDS)) return false;
  return !(target instanceof HTMLInputElement && target.readOnly);
}
