/**
 * Model suggestions on the annotator page (issue 18), the view: the suggestions of the
 * Current Paragraph, drawn as dashed outlines in the text and listed under it, each with
 * its category, question and a "Suggested" label, and buttons **Accept**, **Reject** and
 * **Edit**. What the decisions are and what each button does to them is
 * annotator/suggestion-decisions (no DOM); this module draws them, moves the focus and
 * sends the writes:
 *
 * - Accept adds the suggestion as an annotation (store.add with `suggestion_id`): saved
 *   at once, idempotently, through the same persistent queue as every Add; with
 *   severities it first asks for one in the card (severity.mjs choiceFor).
 * - Reject queues `POST .../suggestions/<id>/rejection` (a client UUID makes it
 *   idempotent); **Undo** queues the DELETE.
 * - Edit puts the suggestion into the steps form: the worker adjusts the span with the
 *   mouse (or keyboard), the category or comment, then Add (the server then records it
 *   as suggestion-edited).
 *
 * The page says why before a move past undecided suggestions (the server would answer
 * 422 `suggestions_undecided`).
 *
 * @module annotator/suggestions
 */

import { button, element, ownDirection } from '../lib/dom.mjs';
import { requestJson } from '../lib/http.mjs';
import { t } from '../lib/i18n.mjs';
import { uuid } from './store.mjs';

/**
 * @typedef {import('./wire.mjs').Annotation} Annotation
 * @typedef {import('./wire.mjs').Suggestion} Suggestion
 * @typedef {import('./suggestion-decisions.mjs').SuggestionDecisions} SuggestionDecisions
 * @typedef {import('./suggestion-decisions.mjs').AcceptedFields} AcceptedFields
 */

/** Worker-visible words, in one place. */
const TEXT = {
  suggested: t('Suggested'),
  accept: t('Accept'),
  reject: t('Reject'),
  edit: t('Edit'),
  undo: t('Undo'),
  accepted: t('Accepted'),
  edited: t('Edited'),
  rejected: t('Rejected'),
  editing: t('Editing: adjust the span, type or comment in the steps, then Add.'),
  undecided: t('Decide on every suggestion in this paragraph first: Accept, Reject or Edit each one.'),
  outline: t('Suggested'),
};

export class Suggestions {
  /**
   * @param {{$root: HTMLElement, $panel: HTMLElement, decisions: SuggestionDecisions,
   *   store: import('./store.mjs').AnnotationStore | import('./practice.mjs').PracticeStore,
   *   csrfToken: string | null, categories: Map<string, {name: string, color: string}>,
   *   severity?: import('./severity.mjs').SeverityStep | null,
   *   on: {change: (paragraphIds: number[]) => void, edit: (suggestion: Suggestion) => void,
   *     added?: (annotation: Annotation) => void}}} options
   *   decisions: the state this view draws (its `url` is also where new ones are read)
   *   store: Accept adds through it, Reject and Undo go through its queue
   *   severity: the taxonomy's severities, when it has some (the question an Accept asks)
   *   on.change: the decisions of these paragraphs changed (redraw their outlines);
   *   on.edit: put the suggestion into the steps form; on.added: an Accept added this
   *   annotation (the page lists it at once)
   */
  constructor({ $root, $panel, decisions, store, csrfToken, categories, severity, on }) {
    this.$root = $root;
    this.$panel = $panel;
    this.$list = /** @type {HTMLElement} */ ($panel.querySelector('.js-suggestion-list'));
    this.decisions = decisions;
    this.store = store;
    this.csrfToken = csrfToken;
    this.categories = categories;
    this.severity = severity ?? null;
    this.on = on;

    // Every listener goes with this controller (destroy()).
    this.listeners = new AbortController();
    const options = { signal: this.listeners.signal };
    $root.addEventListener('click', (event) => this.handleClick(event), options);
    $panel.addEventListener('mouseover', (event) => this.link(event, true), options);
    $panel.addEventListener('mouseout', (event) => this.link(event, false), options);
    store.queue?.addEventListener('rejected', (event) => this.refused(/** @type {CustomEvent} */ (event).detail), options);
    store.addEventListener('rejected', () => this.render(), options);
  }

  /** The suggestion being edited in the steps form, if any. */
  get editing() {
    return this.decisions.editing;
  }

  /** Fetch the suggestions of newly reached paragraphs (after a move revealed one). */
  async refresh() {
    if (!this.decisions.url) return;
    try {
      const result = await requestJson(this.decisions.url, { csrfToken: this.csrfToken ?? undefined });
      this.decisions.merge(result?.suggestions ?? []);
    } catch {
      // Offline: the paragraph could not have been revealed either; the next load has them.
    }
    this.render();
    this.on.change([this.decisions.position]);
  }

  /**
   * Whether a move from paragraph `from` to `to` must wait; says why when it must.
   * @param {number} from
   * @param {number} to
   * @param {(message: string) => void} say
   */
  blocksMove(from, to, say) {
    if (!this.decisions.blocksMove(from, to)) return false;
    say(TEXT.undecided);
    /** @type {HTMLElement | null} */ (this.$list.querySelector('.js-suggestion-accept'))?.focus();
    return true;
  }

  /**
   * The dashed outlines of a paragraph's undecided suggestions (lib/highlight.mjs).
   * @param {number} paragraphId
   * @returns {import('../lib/highlight.mjs').Highlight[]}
   */
  highlights(paragraphId) {
    return this.decisions.outlined(paragraphId).map((s) => ({
      id: `suggestion:${s.id}`,
      start: s.span.start,
      end: s.span.end,
      color: 'transparent',
      className: 'hl-suggestion',
      title: `${TEXT.outline}: ${this.categoryName(s.category)}${s.question ? `\n${s.question}` : ''}`,
      dataset: { suggestion: s.id },
    }));
  }

  /** @param {string} key */
  categoryName(key) {
    return this.categories.get(key)?.name ?? key;
  }

  /**
   * The Current Paragraph changed.
   * @param {number} position
   */
  show(position) {
    const before = this.decisions.moveTo(position);
    this.render();
    this.on.change([before, position]);
  }

  /** Rebuild the list of the current paragraph's suggestions, keeping the focus. */
  render() {
    const suggestions = this.decisions.shown();
    this.$panel.hidden = suggestions.length === 0;
    const $focused = /** @type {HTMLElement | null} */ (document.activeElement);
    const focusKey = $focused && this.$list.contains($focused)
      ? [$focused.closest('.js-suggestion')?.getAttribute('data-suggestion'), $focused.dataset.action]
      : null;
    this.$list.replaceChildren(...suggestions.map((s, index) => this.item(s, index)));
    if (focusKey) {
      const selector = `.js-suggestion[data-suggestion="${CSS.escape(focusKey[0] ?? '')}"] [data-action="${focusKey[1]}"]`;
      /** @type {HTMLElement | null} */ (this.$list.querySelector(selector))?.focus();
    }
  }

  /**
   * One suggestion's card.
   * @param {Suggestion} suggestion
   * @param {number} index
   * @returns {HTMLElement}
   */
  item(suggestion, index) {
    const decision = this.decisions.decision(suggestion);
    const $item = element('li', `suggestion js-suggestion${decision ? ' is-decided' : ''}`);
    $item.dataset.suggestion = suggestion.id;
    const textId = `suggestion-text-${index}`;
    const $head = element('p', 'suggestion__head');
    $head.append(element('span', 'suggestion__label', TEXT.suggested));
    const $category = ownDirection('span', this.categoryName(suggestion.category), 'suggestion__category');
    const color = this.categories.get(suggestion.category)?.color;
    if (color) $category.style.setProperty('--cat-color', color);
    $head.append($category);
    if (decision) $head.append(element('span', `suggestion__decision suggestion__decision--${decision}`, TEXT[decision]));
    const $text = element('p', 'suggestion__text');
    $text.id = textId;
    $text.append(ownDirection('q', suggestion.span.text, 'suggestion__span'));
    if (suggestion.question) $text.append(' ', ownDirection('span', suggestion.question, 'suggestion__question'));
    $item.append($head, $text);
    if (this.decisions.editing === suggestion.id && !decision) {
      $item.append(element('p', 'suggestion__editing', TEXT.editing));
    }
    const $actions = element('div', 'suggestion__actions');
    // Each button is described by the suggestion's text: screen readers hear which one it acts on.
    const action = (/** @type {string} */ label, /** @type {string} */ name, /** @type {string} */ classes) =>
      button(label, `button ${classes}`, { action: name, describedBy: textId });
    if (!decision && this.severity && this.decisions.asking === suggestion.id) {
      $actions.append(this.severity.choiceFor(suggestion.category, textId));
    } else if (!decision) {
      $actions.append(
        action(TEXT.accept, 'accept', 'button--primary js-suggestion-accept'),
        action(TEXT.reject, 'reject', 'button--secondary'),
        action(TEXT.edit, 'edit', 'button--secondary'),
      );
    } else if (decision === 'rejected') {
      $actions.append(action(TEXT.undo, 'undo', 'button--link'));
    }
    $item.append($actions);
    return $item;
  }

  /** @param {MouseEvent} event */
  handleClick(event) {
    const $button = /** @type {HTMLButtonElement | null} */ (/** @type {HTMLElement} */ (event.target).closest('button'));
    if (!$button || $button.disabled) return;
    if ($button.matches('.js-clear')) {
      this.cancelEdit();
      return;
    }
    const id = /** @type {HTMLElement | null} */ ($button.closest('.js-suggestion'))?.dataset.suggestion;
    const suggestion = this.decisions.get(id);
    if (!suggestion || !this.$panel.contains($button)) return;
    const action = $button.dataset.action;
    if (action === 'accept') this.accept(suggestion);
    else if (action === 'reject') this.reject(suggestion);
    else if (action === 'edit') this.edit(suggestion);
    else if (action === 'undo') this.undo(suggestion);
    else if (action === 'severity') this.addAccepted(suggestion, this.decisions.acceptWithSeverity(suggestion.id, $button.dataset.severity ?? ''));
    else if (action === 'cancel-severity') this.cancelAsking(suggestion);
  }

  /** @param {Suggestion} suggestion */
  accept(suggestion) {
    const accepted = this.decisions.accept(suggestion.id);
    if (accepted && 'ask' in accepted) {
      // The taxonomy has severities: the Accept asks for one first (severity.mjs).
      this.render();
      this.focusIn(suggestion, '[data-action="severity"]');
    } else if (accepted) {
      this.addAccepted(suggestion, accepted.add);
    }
  }

  /**
   * A severity's key pressed while an Accept asks for one.
   * @param {string} key
   * @returns {boolean} whether it answered the question
   */
  chooseAskedSeverity(key) {
    const suggestion = this.decisions.get(this.decisions.asking);
    const fields = this.decisions.acceptWithSeverity(null, key);
    if (!suggestion || !fields) return false;
    this.addAccepted(suggestion, fields);
    return true;
  }

  /** @param {Suggestion} suggestion */
  cancelAsking(suggestion) {
    this.decisions.cancelAsking();
    this.render();
    this.focusIn(suggestion, '.js-suggestion-accept');
  }

  /**
   * Focus a control of a suggestion's card.
   * @param {Suggestion} suggestion
   * @param {string} selector
   */
  focusIn(suggestion, selector) {
    /** @type {HTMLElement | null} */ (this.$list.querySelector(
      `.js-suggestion[data-suggestion="${CSS.escape(suggestion.id)}"] ${selector}`,
    ))?.focus();
  }

  /**
   * Store an Accept (the server counts an Accept by category, spans and comment, not by
   * severity).
   * @param {Suggestion} suggestion
   * @param {AcceptedFields | null} fields none: nothing to add (a key not offered)
   */
  addAccepted(suggestion, fields) {
    if (!fields) return;
    const annotation = this.store.add(/** @type {any} */ (fields));
    if (!annotation) return;
    this.on.added?.(annotation);
    this.decided(suggestion);
  }

  /** @param {Suggestion} suggestion */
  reject(suggestion) {
    const queue = this.store.queue;
    const operation = queue ? this.decisions.reject(suggestion.id, uuid()) : null;
    if (!queue || !operation) return;
    queue.enqueue(operation);
    this.decided(suggestion);
  }

  /** @param {Suggestion} suggestion */
  undo(suggestion) {
    const queue = this.store.queue;
    const operation = queue ? this.decisions.undo(suggestion.id) : null;
    if (!queue || !operation) return;
    queue.enqueue(operation);
    this.render();
    this.on.change([suggestion.span.paragraph_id]);
    this.focusIn(suggestion, '.js-suggestion-accept');
  }

  /** @param {Suggestion} suggestion */
  edit(suggestion) {
    if (!this.decisions.edit(suggestion.id)) return;
    this.on.edit(suggestion);
    this.render();
  }

  cancelEdit() {
    if (this.decisions.cancelEdit()) this.render();
  }

  /**
   * An Edit left unfinished before a reload (annotator/draft): editing again, when the
   * suggestion is still undecided in the Current Paragraph.
   * @param {string} id
   */
  resumeEditing(id) {
    if (this.decisions.resumeEditing(id)) this.render();
  }

  /**
   * The fields an Add takes from the suggestion being edited (none when not editing).
   * @returns {{suggestion_id?: string}}
   */
  takeEditing() {
    return this.decisions.takeEditing();
  }

  /**
   * An Add made from an edited suggestion was recorded.
   * @param {Annotation} annotation
   */
  added(annotation) {
    const suggestion = this.decisions.get(/** @type {any} */ (annotation).suggestion_id);
    if (suggestion) this.decided(suggestion);
    else this.render();
  }

  /**
   * After a decision: redraw, and take the focus to the next undecided suggestion (or to
   * the navigation when none is left).
   * @param {Suggestion} suggestion
   */
  decided(suggestion) {
    this.render();
    this.on.change([suggestion.span.paragraph_id]);
    const $next = /** @type {HTMLElement | null} */ (this.$list.querySelector('.js-suggestion-accept'));
    const $nav = /** @type {HTMLElement | null} */ (this.$root.querySelector('.js-next:not([disabled]), .js-submit:not([disabled])'));
    ($next ?? $nav)?.focus({ preventScroll: true });
  }

  /**
   * The server refused a rejection or its undo for good: back to what it knows.
   * @param {{operation: any}} detail
   */
  refused({ operation }) {
    if (!this.decisions.refused(operation)) return;
    this.render();
    this.on.change([this.decisions.position]);
  }

  /**
   * Hovering a card outlines its suggestion in the text more strongly.
   * @param {MouseEvent} event
   * @param {boolean} entering
   */
  link(event, entering) {
    const id = /** @type {HTMLElement | null} */ (/** @type {HTMLElement} */ (event.target).closest('.js-suggestion'))?.dataset.suggestion;
    for (const $mark of this.$root.querySelectorAll('.hl-suggestion.is-linked')) $mark.classList.remove('is-linked');
    if (!entering || !id) return;
    for (const $mark of this.$root.querySelectorAll(`.hl-suggestion[data-suggestion~="${CSS.escape(id)}"]`)) {
      $mark.classList.add('is-linked');
    }
  }

  destroy() {
    this.listeners.abort();
  }
}
