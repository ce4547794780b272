/**
 * The annotator page component (`data-module="annotator"`): reading the document one
 * paragraph at a time and recording errors, after FALTE's crowd workflow.
 *
 * Everything the worker does is applied to the page at once (optimistically) and sent
 * through a persistent queue (annotator/store over lib/sync-queue), so nothing is lost to
 * a reload or a lost connection. This module wires the parts together; each concern has
 * its own module: the document (view), the form (steps), the table, the writes (store,
 * wire), moving (navigation), the status words (status), keys (keyboard), Submit
 * (panels, completion), the listeners (events), model suggestions (suggestion-decisions
 * holds the decisions, suggestions draws them). Features that extend the page hook in
 * through them.
 *
 * @module annotator/annotator
 */

import { ActivityTimer } from './activity.mjs';
import { requestCompletion, showCompletion } from './completion.mjs';
import { CorefCues } from './coref.mjs';
import { DraftStore, fittingDraft } from './draft.mjs';
import { startHeartbeat } from './heartbeat.mjs';
import { bindEvents } from './events.mjs';
import { KeyboardSelection } from './keyboard.mjs';
import { moveKind, navigationState, revealMessage, revealParagraph } from './navigation.mjs';
import { Hint, InstructionsPanel, SubmitQuestion } from './panels.mjs';
import { Practice, PracticeStore } from './practice.mjs';
import { DUPLICATE, duplicateOf } from './rules.mjs';
import { readSelection } from './selection.mjs';
import { isProblem, storeStatusText } from './status.mjs';
import { SeverityStep } from './severity.mjs';
import { Steps } from './steps.mjs';
import { AnnotationStore } from './store.mjs';
import { SuggestionDecisions } from './suggestion-decisions.mjs';
import { Suggestions } from './suggestions.mjs';
import { AnnotationTable } from './table.mjs';
import { DocumentView } from './view.mjs';
import { t } from '../lib/i18n.mjs';

/** @typedef {import('./wire.mjs').Annotation} Annotation */
/** @typedef {import('./wire.mjs').WireSpan} WireSpan */
/** @typedef {import('./wire.mjs').Bootstrap} Bootstrap */

const MESSAGES = {
  submitting: t('Submitting…'),
  submitted: t('Submitted'),
  unfinished: t('Finish the annotation you started (Add) or Clear it before moving on.'),
};

export default class Annotator {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.$root = $root;
    /** @type {Bootstrap} */
    const boot = JSON.parse($root.dataset.bootstrap ?? '{}');
    this.boot = boot;
    this.api = boot.api ?? {};
    this.total = boot.document.total_paragraphs;
    this.furthest = boot.furthest ?? 0;
    this.status = boot.status;
    this.readOnly = Boolean(boot.read_only || boot.preview || boot.status !== 'active');
    this.busy = false;
    /** @type {string} a navigation message shown instead of the save state */
    this.statusText = '';
    // Every listener the page adds goes with this controller (destroy()).
    this.listeners = new AbortController();

    const $ = (/** @type {string} */ selector) => /** @type {HTMLElement} */ ($root.querySelector(selector));
    this.$status = $('.js-status');
    this.$progress = $('.js-progress');
    this.$previous = /** @type {HTMLButtonElement} */ ($('.js-previous'));
    this.$next = /** @type {HTMLButtonElement} */ ($('.js-next'));
    this.$submit = /** @type {HTMLButtonElement} */ ($('.js-submit'));
    this.$completion = $('.js-completion');
    this.question = new SubmitQuestion({ $question: $('.js-submit-question'), $submit: this.$submit });
    this.hint = new Hint({ $hint: $('.js-hint') });

    /** @type {Map<string, any>} */
    this.categories = new Map(boot.taxonomy.categories.map((c) => [c.key, c]));
    this.shortcuts = new Map(boot.taxonomy.categories.filter((c) => c.shortcut).map((c) => [c.shortcut, c.key]));
    this.view = new DocumentView({
      $context: $('.js-context-body'),
      $contextEmpty: $('.js-context-empty'),
      $current: $('.js-current-body'),
      categories: this.categories,
      extraHighlights: (id) => this.suggestions?.highlights(id) ?? [],
    });
    this.view.addParagraphs(boot.document.paragraphs);
    const severity = SeverityStep.fromForm($('.js-form'), boot.taxonomy);
    this.table = new AnnotationTable({
      $body: $('.js-annotations'),
      $empty: $('.js-annotations-empty'),
      categories: this.categories,
      paragraphText: (id) => this.view.text(id),
      paragraphName: (id) => this.paragraphName(id),
      severityName: severity ? (key) => severity.name(key) : null,
    });
    this.steps = new Steps({
      severity,
      $form: /** @type {HTMLFormElement} */ ($('.js-form')),
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
    this.coref = new CorefCues({ $scope: $root, entities: boot.entities ?? [], paragraphs: () => this.view.shown() });
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
    const decisions = new SuggestionDecisions({
      suggestions: boot.suggestions ?? [],
      annotations: this.annotations,
      writable: !this.readOnly,
      url: this.api.suggestions ?? null,
      severities: severity ? (category) => severity.offeredFor(category).map((s) => s.key) : null,
    });
    decisions.replay(this.store.queue?.operations ?? []); // Rejects and Undos from before a reload
    this.suggestions = new Suggestions({
      $root,
      $panel: $('.js-suggestions'),
      decisions,
      store: this.store,
      csrfToken: boot.csrf_token,
      categories: this.categories,
      severity,
      on: {
        change: (ids) => this.view.renderHighlights(this.annotations.values(), ids),
        edit: (suggestion) => this.editSuggestion(suggestion),
        added: (annotation) => this.table.add(annotation),
      },
    });
    this.activity = new ActivityTimer();
    this.instructions = new InstructionsPanel({
      $root,
      $panel: $('.js-instructions'),
      $toggle: $('.js-toggle-instructions'),
    });
    bindEvents(this, this.listeners.signal);
    this.practice = boot.practice
      ? new Practice({ annotator: this, options: boot.practice, signal: this.listeners.signal })
      : null;

    this.view.renderHighlights(this.annotations.values());
    this.table.renderAll([...this.annotations.values()]);
    this.view.show(this.position);
    this.suggestions.show(this.position);
    this.steps.setReadOnly(this.readOnly);
    this.table.setReadOnly(this.readOnly);
    this.restoreDraft();
    if (this.status === 'submitted' && boot.completion) {
      showCompletion(this.$completion, boot.completion, boot.mturk, false);
    }
    this.renderNavigation();
    this.practice?.restore(); // the latest check's feedback, after a reload
    this.renderStatus();
    this.store.flush();
    this.heartbeat = startHeartbeat({ url: this.api.heartbeat, csrfToken: boot.csrf_token, enabled: !this.readOnly });
    // For tests and bench/long_document.py: the page is drawn and listening.
    $root.dataset.ready = 'true';
    performance.mark('annotator:ready');
  }

  /**
   * How a paragraph is numbered on screen: from 1; researchers (the session viewer) also
   * read its export id, which counts from 0 (templates/research/_paragraphs.html).
   * @param {number} id
   * @returns {string}
   */
  paragraphName(id) {
    return this.boot.viewer ? `${id + 1} (id ${id})` : String(id + 1);
  }

  /**
   * Read a range of the text (a mouse or keyboard selection) into step 1 or step 3.
   * @param {Range} range
   * @returns {boolean} false when the range covers no paragraph text
   */
  takeRange(range) {
    if (this.readOnly) return false;
    const forPaired = this.steps.target === 'paired' && this.steps.needsPaired;
    const result = readSelection(range, this.view.shown(), { position: this.position, forPaired });
    if (!result) return false;
    if ('refusal' in result) {
      this.hint.show(result.refusal);
      return true;
    }
    if (forPaired) this.steps.setPaired(result.span);
    else this.steps.setSpan(result.span);
    this.hint.show('');
    return true;
  }

  /** Step 5: record the annotation described by the form, if the server's rules allow it. */
  addAnnotation() {
    if (!this.steps.isComplete()) return;
    const problem = this.steps.problem({ text: (id) => this.view.text(id), furthest: this.furthest });
    if (problem) {
      this.steps.showError(problem);
      return;
    }
    // The same error type on the same span(s) again: the server would refuse it (422
    // duplicate_annotation). An Edit of a suggestion is its decision, not refused so.
    if (this.suggestions.editing === null && duplicateOf(this.annotations.values(), this.steps.value())) {
      this.steps.showError(DUPLICATE);
      return;
    }
    // An Add after Edit of a suggestion names it (the server then records an edit).
    const annotation = this.store.add({ ...this.steps.value(), ...this.suggestions.takeEditing() });
    if (!annotation) return;
    this.statusText = '';
    this.redraw(annotation);
    this.table.add(annotation);
    this.steps.clear();
    this.suggestions.added(annotation);
  }

  /**
   * Edit of a suggestion: its span, category and comment go into the steps, to adjust.
   * @param {import('./wire.mjs').Suggestion} suggestion
   */
  editSuggestion(suggestion) {
    this.steps.restore({
      span: suggestion.span,
      paired: suggestion.paired_span,
      category: suggestion.category,
      comment: suggestion.comment,
    });
    // Step 1 again: the span is adjusted in the Current Paragraph (mouse, or keys there).
    /** @type {HTMLElement} */ (this.$root.querySelector('.js-current-body')).focus();
  }

  /** @param {string} id */
  removeAnnotation(id) {
    const $row = this.table.rows.get(id)?.row;
    const annotation = this.store.remove(id);
    if (!annotation) return;
    this.statusText = '';
    this.redraw(annotation);
    this.suggestions.render(); // a suggestion it was made from is undecided again
    const $next = $row?.nextElementSibling ?? $row?.previousElementSibling;
    this.table.remove(id);
    // Keep keyboard users in the table: the neighbouring Remove, else the heading.
    const $focus = /** @type {HTMLElement | null} */ (
      $next?.querySelector('.js-remove') ?? this.$root.querySelector('#previous-heading')
    );
    $focus?.focus();
  }

  /**
   * A change the server refused for good: an Add is taken off the page (the store has
   * dropped it) and put back into the form, or named, with the reason.
   * @param {{annotation: Annotation | null, error: Error}} detail
   */
  afterRejected({ annotation, error }) {
    if (annotation) {
      this.table.remove(annotation.id);
      this.redraw(annotation);
      this.steps.takeBackRefused(annotation, error, annotation.span.paragraph_id === this.position);
    }
    this.renderStatus();
  }

  /**
   * Keep the unfinished annotation for a reload (once the saved one is restored), with
   * the suggestion it edits, if any.
   */
  saveDraft() {
    if (!this.draftRestored) return;
    const editing = this.suggestions.editing;
    this.draft.save(editing ? { ...this.steps.draft(), suggestion_id: editing } : this.steps.draft());
  }

  /**
   * Put back the annotation left unfinished before a reload, if it still fits the page;
   * an Edit of a suggestion is an Edit again (its Add records suggestion-edited).
   */
  restoreDraft() {
    const draft = this.readOnly ? null : this.draft.load();
    if (draft?.suggestion_id) this.suggestions.resumeEditing(draft.suggestion_id);
    this.draftRestored = true;
    if (draft) this.steps.restore(fittingDraft(draft, this.position, (span) => this.view.range(span)));
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
      this.hint.show(t('This annotation is in paragraph {n}: go forward to see it.', { n: this.paragraphName(paragraph) }));
      return;
    }
    this.view.reveal(id, paragraph);
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

  /** @returns {import('./navigation.mjs').Place} */
  place() {
    return {
      position: this.position,
      furthest: this.furthest,
      total: this.total,
      busy: this.busy,
      readOnly: this.readOnly,
      pending: this.store.pending,
    };
  }

  /**
   * Move to a paragraph: within those reached, at once; one further, after the server
   * has sent its text.
   * @param {number} target
   */
  async goTo(target) {
    const canReveal = !this.readOnly && Boolean(this.api.position);
    const kind = moveKind(target, { ...this.place(), canReveal });
    if (!kind || this.hasUnfinishedAnnotation()) return;
    if (this.suggestions.blocksMove(this.position, target, (message) => this.hint.show(message))) return;
    if (kind === 'reveal') {
      if (!(await this.reveal(target))) return;
    } else if (!this.readOnly) {
      this.store.savePosition(target, this.activity.take());
    }
    this.position = target;
    this.steps.clear();
    this.hint.show('');
    this.coref.clear();
    this.view.show(target);
    this.suggestions.show(target);
    this.steps.drawPending();
    this.renderNavigation();
    // The button pressed was disabled while the paragraph loaded, which drops the focus:
    // give it back (keyboard users), without scrolling the page the worker may have moved.
    if (document.activeElement === document.body && !this.$next.disabled) this.$next.focus({ preventScroll: true });
  }

  /**
   * Ask the server for the next paragraph and add it to the page.
   * @param {number} target
   * @returns {Promise<boolean>} whether it arrived
   */
  async reveal(target) {
    this.busy = true;
    this.renderNavigation();
    this.setStatus(revealMessage(null));
    // A direct move records the position: the queued ones are superseded.
    this.store.dropPositions();
    // The paragraph's decisions go first: the server refuses a move past a suggestion it
    // has not seen decided (suggestions_undecided), as a Reject made just now may be.
    await this.store.settled();
    try {
      const result = await revealParagraph({
        url: /** @type {string} */ (this.api.position),
        csrfToken: this.boot.csrf_token,
        target,
        activeSeconds: this.activity.take(),
      });
      this.view.addParagraphs(result.paragraphs ?? []);
      const revealed = (result.paragraphs ?? []).map((p) => p.paragraph_id);
      this.view.renderHighlights(this.annotations.values(), revealed);
      this.furthest = Math.max(this.furthest, result.furthest ?? target);
      this.suggestions.refresh(); // the suggestions of the paragraph just reached
      this.busy = false;
      this.setStatus('');
      return true;
    } catch (error) {
      this.busy = false;
      this.setStatus(revealMessage(error instanceof Error ? error : new Error(String(error))));
      this.renderNavigation();
      return false;
    }
  }

  /** Submit asks first, in the page: it cannot be undone. */
  askToSubmit() {
    if (!this.canSubmit() || this.hasUnfinishedAnnotation()) return;
    if (this.suggestions.blocksMove(this.position, this.total, (message) => this.hint.show(message))) return;
    this.question.ask();
  }

  async submit() {
    this.question.close();
    if (!this.canSubmit() || !this.api.submit || this.hasUnfinishedAnnotation()) return;
    this.busy = true;
    this.renderNavigation();
    this.setStatus(MESSAGES.submitting);
    try {
      const completion = await requestCompletion(this.api.submit, this.boot.csrf_token);
      this.status = 'submitted';
      this.setReadOnly();
      this.busy = false;
      this.setStatus(MESSAGES.submitted);
      showCompletion(this.$completion, completion, this.boot.mturk, true);
    } catch (error) {
      this.busy = false;
      this.setStatus(t('Could not submit: {error}', { error: error instanceof Error ? error.message : String(error) }));
    }
    this.renderNavigation();
  }

  /**
   * The session can no longer change (submitted): the page only shows it; practice's
   * Check my answers freezes it too, and Try again opens it again (readOnly false).
   * @param {boolean} [readOnly]
   */
  setReadOnly(readOnly = true) {
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
    this.hint.show(MESSAGES.unfinished);
    return true;
  }

  canSubmit() {
    return navigationState(this.place()).submit;
  }

  renderNavigation() {
    const open = navigationState(this.place());
    this.$progress.textContent = t('Paragraph {n} of {total}', { n: this.paragraphName(this.position), total: this.total });
    this.$previous.disabled = !open.previous;
    this.$next.disabled = !open.next;
    this.$submit.disabled = !open.submit;
    if (!open.submit && !this.busy) this.question.close();
    this.practice?.render();
  }

  /** @param {string} text a navigation message, or '' to show the save state again */
  setStatus(text) {
    this.statusText = text;
    this.renderStatus();
  }

  renderStatus() {
    const text = storeStatusText(this.store, this.statusText);
    if (this.$status.textContent !== text) this.$status.textContent = text;
    this.$status.classList.toggle('status--error', isProblem(text));
    this.$submit.disabled = !this.canSubmit();
  }

  destroy() {
    this.listeners.abort();
    this.hint.destroy();
    this.view.destroy();
    this.keyboard.destroy();
    this.store.destroy();
    this.heartbeat?.destroy();
    this.activity.destroy();
    this.coref.destroy();
    this.steps.destroy();
    this.suggestions.destroy();
  }
}
