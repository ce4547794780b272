/**
 * Steps 1-5 of one annotation (FALTE, Figure 3): the error span, the category, the paired
 * span (paired categories only), the comment, and Add; with a taxonomy that has
 * severities, a severity after the category (severity.mjs, through `this.severity`).
 *
 * The chosen spans stay visible in the text after the browser's selection is gone, drawn
 * with the CSS Custom Highlight API (`::highlight(pending-span)`), so nothing is inserted
 * into the paragraphs.
 *
 * @module annotator/steps
 */

/**
 * @typedef {import('./wire.mjs').WireSpan} WireSpan
 * @typedef {import('./wire.mjs').Category} Category
 * @typedef {{key: string, name: string, type: string, paired_prompt?: string | null,
 *   shortcut?: string | null, color: string, description?: string}} FullCategory
 */

import { checkAnnotation, refusalMessage } from './rules.mjs';
import { t } from '../lib/i18n.mjs';

const DEFAULT_PAIRED_PROMPT = t('Highlight the other span, in the Context or the Current Paragraph.');

export class Steps {
  /**
   * @param {{$form: HTMLFormElement, categories: Map<string, FullCategory>, commentRequired: boolean,
   *   commentLabel?: string, maxCommentLength?: number | null, range: (span: WireSpan) => Range | null,
   *   onChange?: () => void, severity?: import('./severity.mjs').SeverityStep | null}} options
   *   onChange: called after every change of the form (to keep the draft);
   *   severity: the severity step, when the taxonomy has severities
   */
  constructor({ $form, categories, commentRequired, commentLabel, maxCommentLength, range, onChange, severity }) {
    this.$form = $form;
    this.categories = categories;
    this.commentRequired = commentRequired;
    this.commentLabel = commentLabel ?? '';
    this.maxCommentLength = maxCommentLength ?? Infinity;
    this.range = range;
    this.onChange = onChange;
    this.severity = severity ?? null;
    this.$span = /** @type {HTMLInputElement} */ ($form.querySelector('.js-span'));
    this.$paired = /** @type {HTMLInputElement} */ ($form.querySelector('.js-paired-span'));
    this.$pairedStep = /** @type {HTMLElement} */ ($form.querySelector('.js-step-paired'));
    this.$pairedPrompt = /** @type {HTMLElement} */ ($form.querySelector('.js-paired-prompt'));
    this.$comment = /** @type {HTMLInputElement} */ ($form.querySelector('.js-comment'));
    if (maxCommentLength && (this.$comment.maxLength < 0 || maxCommentLength < this.$comment.maxLength)) {
      this.$comment.maxLength = maxCommentLength; // the server's limit, when stricter
    }
    this.$add = /** @type {HTMLButtonElement} */ ($form.querySelector('.js-add'));
    this.$clear = /** @type {HTMLButtonElement} */ ($form.querySelector('.js-clear'));
    this.$error = /** @type {HTMLElement} */ ($form.querySelector('.js-add-error'));
    this.$categories = /** @type {HTMLButtonElement[]} */ ([...$form.querySelectorAll('.js-category')]);
    for (const $button of this.$categories) {
      const color = categories.get($button.dataset.category ?? '')?.color;
      if (color) $button.style.setProperty('--cat-color', color);
    }
    /** @type {WireSpan | null} */
    this.span = null;
    /** @type {WireSpan | null} */
    this.paired = null;
    /** @type {string | null} */
    this.category = null;
    /** Which box the next text selection fills. @type {'span' | 'paired'} */
    this.target = 'span';
    this.readOnly = false;
    this.highlightsSupported = typeof CSS !== 'undefined' && 'highlights' in CSS;
    this.render();
  }

  /** The chosen category, if any. */
  get chosen() {
    return this.category ? (this.categories.get(this.category) ?? null) : null;
  }

  get needsPaired() {
    return this.chosen?.type === 'paired';
  }

  /** @param {WireSpan} span */
  setSpan(span) {
    this.showError('');
    this.span = span;
    if (this.needsPaired && !this.paired) this.target = 'paired';
    this.render();
  }

  /** @param {WireSpan} span */
  setPaired(span) {
    this.showError('');
    this.paired = span;
    this.render();
  }

  /** @param {'span' | 'paired'} target */
  setTarget(target) {
    this.target = target === 'paired' && this.needsPaired ? 'paired' : 'span';
    this.render();
  }

  /**
   * Choose a category (step 2).
   * @param {string} key
   * @returns {boolean} false when there is no such category
   */
  choose(key) {
    if (this.readOnly || !this.categories.has(key)) return false;
    this.showError('');
    this.category = key;
    this.severity?.offerFor(key);
    if (this.needsPaired) {
      if (this.span) this.target = 'paired';
    } else {
      this.paired = null;
      this.target = 'span';
    }
    this.render();
    return true;
  }

  /**
   * Choose a severity (the step after the category, when the taxonomy has severities).
   * @param {string} key
   * @returns {boolean} false when there is no such severity for the category
   */
  chooseSeverity(key) {
    if (this.readOnly || !this.severity?.choose(key)) return false;
    this.showError('');
    this.render();
    return true;
  }

  /** True when Add would record a complete annotation. */
  isComplete() {
    if (this.readOnly || !this.span || !this.category) return false;
    if (this.needsPaired && !this.paired) return false;
    if (this.severity?.isMissing()) return false;
    if (this.commentRequired && !this.$comment.value.trim()) return false;
    return true;
  }

  /**
   * Why the server would refuse the annotation of the form (app/rules/spans.py's rules and
   * words, see rules.mjs), or null.
   * @param {{text: (id: number) => string | undefined, furthest: number}} paragraphs
   * @returns {string | null}
   */
  problem({ text, furthest }) {
    const value = this.value();
    const problem = checkAnnotation({
      category: this.chosen,
      categoryKey: value.category,
      knownCategories: [...this.categories.keys()],
      span: value.span,
      paired: value.paired_span,
      comment: value.comment,
      commentRequired: this.commentRequired,
      commentLabel: this.commentLabel,
      maxCommentLength: this.maxCommentLength,
      text,
      furthest,
    });
    return problem?.message ?? null;
  }

  /** The annotation fields of the form (without id); `severity` only with severities. */
  value() {
    const comment = this.$comment.value.trim();
    return {
      category: /** @type {string} */ (this.category),
      span: /** @type {WireSpan} */ (this.span),
      paired_span: this.needsPaired ? this.paired : null,
      comment: comment || null,
      ...(this.severity ? { severity: this.severity.value } : {}),
    };
  }

  /**
   * Put an annotation back into the form (a saved draft, or an Add the server refused).
   * @param {{span: WireSpan | null, paired: WireSpan | null, category: string | null, comment: string | null,
   *   severity?: string | null}} fields
   */
  restore({ span, paired, category, comment, severity }) {
    this.category = category && this.categories.has(category) ? category : null;
    this.severity?.offerFor(this.category);
    this.severity?.restore(severity);
    this.span = span;
    this.paired = this.needsPaired ? paired : null;
    this.$comment.value = comment ?? '';
    this.target = this.needsPaired && span && !this.paired ? 'paired' : 'span';
    this.render();
  }

  /**
   * An Add the server refused for good: back into the form when it can be (`here`: the
   * worker is still on its paragraph, and has not started another), else named, with the
   * server's reason next to Add.
   * @param {import('./wire.mjs').Annotation} annotation
   * @param {Error} error
   * @param {boolean} here
   */
  takeBackRefused(annotation, error, here) {
    if (here && this.isEmpty() && !this.readOnly) {
      this.restore({
        span: annotation.span,
        paired: annotation.paired_span,
        category: annotation.category,
        comment: annotation.comment,
        severity: annotation.severity,
      });
      this.showError(refusalMessage(error));
    } else {
      this.showError(t('Your annotation of “{text}” was not saved: {error}', { text: annotation.span.text, error: refusalMessage(error) }));
    }
  }

  /** The form as a draft to keep. */
  draft() {
    const draft = { span: this.span, paired: this.paired, category: this.category, comment: this.$comment.value };
    return this.severity ? { ...draft, severity: this.severity.value } : draft;
  }

  /** True when nothing is chosen or typed. */
  isEmpty() {
    return !(this.span || this.paired || this.category || this.$comment.value || this.severity?.value);
  }

  /**
   * Say why Add was refused, next to Add ('' removes the message).
   * @param {string} message
   */
  showError(message) {
    if (this.$error.textContent !== message) this.$error.textContent = message;
  }

  /** The comment was edited. */
  commentChanged() {
    this.showError('');
    this.render();
  }

  /** Start over (after Add, Clear or a move to another paragraph). */
  clear() {
    this.showError('');
    this.span = null;
    this.paired = null;
    this.category = null;
    this.severity?.reset();
    this.target = 'span';
    this.$comment.value = '';
    this.render();
  }

  /** @param {boolean} readOnly */
  setReadOnly(readOnly) {
    this.readOnly = readOnly;
    for (const $button of this.$categories) $button.disabled = readOnly;
    this.severity?.setReadOnly(readOnly);
    this.$comment.disabled = readOnly;
    if (readOnly) this.clear();
    else this.render();
  }

  /** Bring the form in line with the state. */
  render() {
    this.$span.value = this.span?.text ?? '';
    this.$span.title = this.span?.text ?? '';
    this.$paired.value = this.paired?.text ?? '';
    this.$paired.title = this.paired?.text ?? '';
    for (const $button of this.$categories) {
      $button.setAttribute('aria-pressed', String($button.dataset.category === this.category));
    }
    this.severity?.render();
    this.$pairedStep.hidden = !this.needsPaired;
    this.numberSteps();
    this.$pairedPrompt.textContent = this.chosen?.paired_prompt || DEFAULT_PAIRED_PROMPT;
    this.$span.closest('.step')?.classList.toggle('is-active', !this.readOnly && this.target === 'span');
    this.$pairedStep.classList.toggle('is-active', !this.readOnly && this.target === 'paired');
    this.$add.disabled = !this.isComplete();
    this.$clear.disabled = this.readOnly || this.isEmpty();
    this.drawPending();
    this.onChange?.();
  }

  /** Number the steps shown, 1, 2, 3...: the paired step takes a number only when shown. */
  numberSteps() {
    let number = 0;
    for (const $step of this.$form.querySelectorAll('.step')) {
      const $number = $step.querySelector('.step__number');
      if (!$number || /** @type {HTMLElement} */ ($step).hidden) continue;
      number += 1;
      if ($number.textContent !== String(number)) $number.textContent = String(number);
    }
  }

  /** Draw the chosen spans in the text (call again after paragraphs are re-rendered). */
  drawPending() {
    if (!this.highlightsSupported) return;
    for (const [name, span] of /** @type {[string, WireSpan | null][]} */ ([
      ['pending-span', this.span],
      ['pending-paired', this.needsPaired ? this.paired : null],
    ])) {
      const range = span ? this.range(span) : null;
      if (range) CSS.highlights.set(name, new Highlight(range));
      else CSS.highlights.delete(name);
    }
  }

  destroy() {
    if (!this.highlightsSupported) return;
    CSS.highlights.delete('pending-span');
    CSS.highlights.delete('pending-paired');
  }
}
