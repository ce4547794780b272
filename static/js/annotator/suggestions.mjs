/**
 * Model suggestions on the annotator page (issue 18): the suggestions of the Current
 * Paragraph, drawn as dashed outlines in the text and listed under it, each with its
 * category, question and a "Suggested" label, and buttons **Accept**, **Reject** and
 * **Edit**.
 *
 * - Accept adds the suggestion as an annotation (store.add with `suggestion_id`): saved
 *   at once, idempotently, through the same persistent queue as every Add.
 * - Reject queues `POST .../suggestions/<id>/rejection` (a client UUID makes it
 *   idempotent); **Undo** queues the DELETE.
 * - Edit puts the suggestion into the steps form: the worker adjusts the span with the
 *   mouse (or keyboard), the category or comment, then Add (the server then records it
 *   as suggestion-edited).
 *
 * A suggestion's decision is derived, never stored apart: a live annotation made from it
 * (accepted / edited), else a rejection not undone, else undecided. Removing that
 * annotation makes it undecided again. The worker cannot move past a paragraph with
 * undecided suggestions (the server says 422 `suggestions_undecided`; the page says why
 * before asking).
 *
 * @module annotator/suggestions
 */

import { ownDirection } from '../lib/direction.mjs';
import { requestJson } from '../lib/http.mjs';
import { uuid } from './store.mjs';
import { REJECT, UNREJECT, rejectOperation, unrejectOperation } from './wire.mjs';
import { t } from '../lib/i18n.mjs';

/**
 * @typedef {import('./wire.mjs').WireSpan} WireSpan
 * @typedef {import('./wire.mjs').Annotation} Annotation
 * @typedef {import('./wire.mjs').Suggestion} Suggestion
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
   * @param {{$root: HTMLElement, $panel: HTMLElement, suggestions: Suggestion[],
   *   store: import('./store.mjs').AnnotationStore, url: string | null, csrfToken: string | null,
   *   categories: Map<string, {name: string, color: string}>, writable: boolean,
   *   onChange: (paragraphIds: number[]) => void, onEdit: (suggestion: Suggestion) => void,
   *   severity?: import('./severity.mjs').SeverityStep | null, onAdded?: (annotation: Annotation) => void}} options
   *   onChange: the decisions of these paragraphs changed (redraw their outlines)
   *   onEdit: put the suggestion into the steps form
   *   severity: the taxonomy's severities, when it has some: Accept then asks for one
   *   onAdded: an Accept added this annotation (the page lists it at once)
   */
  constructor({ $root, $panel, suggestions, store, url, csrfToken, categories, writable, onChange, onEdit, severity, onAdded }) {
    this.$root = $root;
    this.$panel = $panel;
    this.$list = /** @type {HTMLElement} */ ($panel.querySelector('.js-suggestion-list'));
    this.store = store;
    this.url = url;
    this.csrfToken = csrfToken;
    this.categories = categories;
    this.writable = writable;
    this.onChange = onChange;
    this.onEdit = onEdit;
    /** @type {Map<string, Suggestion>} */
    this.byId = new Map();
    /** suggestion id -> the client id of its live rejection @type {Map<string, string>} */
    this.rejected = new Map();
    /** @type {string | null} the suggestion being edited in the steps form */
    this.editing = null;
    this.severity = severity ?? null;
    this.onAdded = onAdded;
    /** @type {string | null} the suggestion whose Accept waits for a severity */
    this.asking = null;
    this.position = 0;
    this.merge(suggestions);
    this.replayQueued();

    // Every listener goes with this controller (destroy()).
    this.listeners = new AbortController();
    const options = { signal: this.listeners.signal };
    $root.addEventListener('click', (event) => this.handleClick(event), options);
    $panel.addEventListener('mouseover', (event) => this.link(event, true), options);
    $panel.addEventListener('mouseout', (event) => this.link(event, false), options);
    store.queue?.addEventListener('rejected', (event) => this.refused(/** @type {CustomEvent} */ (event).detail), options);
    store.addEventListener('rejected', () => this.render(), options);
  }

  /** @param {Suggestion[]} suggestions */
  merge(suggestions) {
    for (const suggestion of suggestions) {
      const known = this.byId.has(suggestion.id);
      this.byId.set(suggestion.id, suggestion);
      if (!known && suggestion.decision === 'rejected') this.rejected.set(suggestion.id, '');
    }
  }

  /** Rejections and undos still waiting in the queue (from before a reload) count already. */
  replayQueued() {
    for (const operation of this.store.queue?.operations ?? []) {
      const id = /** @type {any} */ (operation).suggestion;
      if (!id) continue;
      if (operation.kind === REJECT) this.rejected.set(id, operation.id ?? '');
      if (operation.kind === UNREJECT) this.rejected.delete(id);
    }
  }

  /** Fetch the suggestions of newly reached paragraphs (after a move revealed one). */
  async refresh() {
    if (!this.url) return;
    try {
      const result = await requestJson(this.url, { csrfToken: this.csrfToken ?? undefined });
      this.merge(result?.suggestions ?? []);
    } catch {
      // Offline: the paragraph could not have been revealed either; the next load has them.
    }
    this.render();
    this.onChange([this.position]);
  }

  /**
   * The live annotation made from a suggestion, if any.
   * @param {string} id
   * @returns {Annotation & {suggestion_id?: string, origin?: string} | undefined}
   */
  annotationOf(id) {
    for (const annotation of this.store.annotations.values()) {
      if (/** @type {any} */ (annotation).suggestion_id === id) return annotation;
    }
    return undefined;
  }

  /**
   * accepted | edited | rejected | null
   * @param {Suggestion} suggestion
   * @returns {string | null}
   */
  decision(suggestion) {
    const annotation = this.annotationOf(suggestion.id);
    if (annotation?.origin) return annotation.origin === 'suggestion-accepted' ? 'accepted' : 'edited';
    if (annotation) return isAccept(suggestion, annotation) ? 'accepted' : 'edited';
    return this.rejected.has(suggestion.id) ? 'rejected' : null;
  }

  /**
   * @param {number} paragraphId
   * @returns {Suggestion[]}
   */
  of(paragraphId) {
    return [...this.byId.values()]
      .filter((s) => s.span.paragraph_id === paragraphId)
      .sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end);
  }

  /**
   * Undecided suggestions between the current paragraph and a target (excluded).
   * @param {number} from
   * @param {number} to
   */
  undecided(from, to) {
    return [...this.byId.values()].filter(
      (s) => s.span.paragraph_id >= from && s.span.paragraph_id < to && this.decision(s) === null,
    );
  }

  /**
   * Whether a move from paragraph `from` to `to` must wait; says why when it must.
   * @param {number} from
   * @param {number} to
   * @param {(message: string) => void} say
   */
  blocksMove(from, to, say) {
    if (!this.writable || to <= from || !this.undecided(from, to).length) return false;
    say(TEXT.undecided);
    const $first = /** @type {HTMLElement | null} */ (this.$list.querySelector('.js-suggestion-accept'));
    $first?.focus();
    return true;
  }

  /**
   * The dashed outlines of a paragraph's undecided suggestions (lib/highlight.mjs).
   * @param {number} paragraphId
   * @returns {import('../lib/highlight.mjs').Highlight[]}
   */
  highlights(paragraphId) {
    if (paragraphId !== this.position || !this.writable) return [];
    return this.of(paragraphId)
      .filter((s) => this.decision(s) === null)
      .map((s) => ({
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
    const before = this.position;
    this.position = position;
    this.editing = null;
    this.asking = null;
    this.render();
    this.onChange([before, position]);
  }

  /** Rebuild the list of the current paragraph's suggestions. */
  render() {
    const suggestions = this.writable ? this.of(this.position) : [];
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
    const decision = this.decision(suggestion);
    const $item = element('li', `suggestion js-suggestion${decision ? ' is-decided' : ''}`);
    $item.dataset.suggestion = suggestion.id;
    const textId = `suggestion-text-${index}`;
    const $head = element('p', 'suggestion__head');
    $head.append(element('span', 'suggestion__label', TEXT.suggested));
    const $category = ownDirection('span', this.categoryName(suggestion.category), 'suggestion__category');
    $category.style.setProperty('--cat-color', this.categories.get(suggestion.category)?.color ?? '#d0d0d0');
    $head.append($category);
    if (decision) $head.append(element('span', `suggestion__decision suggestion__decision--${decision}`, TEXT[decision]));
    const $text = element('p', 'suggestion__text');
    $text.id = textId;
    $text.append(ownDirection('q', suggestion.span.text, 'suggestion__span'));
    if (suggestion.question) $text.append(' ', ownDirection('span', suggestion.question, 'suggestion__question'));
    $item.append($head, $text);
    if (this.editing === suggestion.id && !decision) {
      $item.append(element('p', 'suggestion__editing', TEXT.editing));
    }
    const $actions = element('div', 'suggestion__actions');
    if (!decision && this.severity && this.asking === suggestion.id) {
      $actions.append(this.severity.choiceFor(suggestion.category, textId));
    } else if (!decision) {
      $actions.append(
        button(TEXT.accept, 'accept', 'button--primary js-suggestion-accept', textId),
        button(TEXT.reject, 'reject', 'button--secondary', textId),
        button(TEXT.edit, 'edit', 'button--secondary', textId),
      );
    } else if (decision === 'rejected') {
      $actions.append(button(TEXT.undo, 'undo', 'button--link', textId));
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
    const suggestion = id ? this.byId.get(id) : undefined;
    if (!suggestion || !this.$panel.contains($button)) return;
    const action = $button.dataset.action;
    if (action === 'accept') this.accept(suggestion);
    else if (action === 'reject') this.reject(suggestion);
    else if (action === 'edit') this.edit(suggestion);
    else if (action === 'undo') this.undo(suggestion);
    else if (action === 'severity') this.acceptWithSeverity(suggestion, $button.dataset.severity ?? '');
    else if (action === 'cancel-severity') this.cancelAsking(suggestion);
  }

  /** @param {Suggestion} suggestion */
  accept(suggestion) {
    if (this.decision(suggestion) !== null) return;
    if (this.severity) {
      // The taxonomy has severities: the Accept asks for one first (severity.mjs).
      this.asking = suggestion.id;
      this.render();
      this.focusIn(suggestion, '[data-action="severity"]');
      return;
    }
    this.addAccepted(suggestion, acceptFields(suggestion));
  }

  /**
   * The severity asked by an Accept was chosen: add the suggestion with it.
   * @param {Suggestion} suggestion
   * @param {string} key
   * @returns {boolean} false when the key is not one the suggestion's category offers
   */
  acceptWithSeverity(suggestion, key) {
    if (this.asking !== suggestion.id || !this.severity?.offeredFor(suggestion.category).some((s) => s.key === key)) {
      return false;
    }
    this.asking = null;
    this.addAccepted(suggestion, { ...acceptFields(suggestion), severity: key });
    return true;
  }

  /**
   * A severity's key pressed while an Accept asks for one.
   * @param {string} key
   * @returns {boolean} whether it answered the question
   */
  chooseAskedSeverity(key) {
    const suggestion = this.asking ? this.byId.get(this.asking) : undefined;
    return suggestion ? this.acceptWithSeverity(suggestion, key) : false;
  }

  /** @param {Suggestion} suggestion */
  cancelAsking(suggestion) {
    this.asking = null;
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
   * Store an Accept. The seam for severities (issue 18, point 4): a taxonomy with
   * severities asks for one between accept() and this call, and adds it to `fields`
   * (the server counts an Accept by category, spans and comment, not by severity).
   * @param {Suggestion} suggestion
   * @param {ReturnType<typeof acceptFields>} fields
   */
  addAccepted(suggestion, fields) {
    const annotation = this.store.add(/** @type {any} */ (fields));
    if (!annotation) return;
    this.onAdded?.(annotation);
    this.decided(suggestion, annotation);
  }

  /** @param {Suggestion} suggestion */
  reject(suggestion) {
    if (this.decision(suggestion) !== null || !this.store.queue || !this.url) return;
    const id = uuid();
    this.rejected.set(suggestion.id, id);
    this.store.queue.enqueue(rejectOperation(this.url, suggestion.id, id));
    this.decided(suggestion, null);
  }

  /** @param {Suggestion} suggestion */
  undo(suggestion) {
    if (!this.rejected.has(suggestion.id) || !this.store.queue || !this.url) return;
    this.rejected.delete(suggestion.id);
    this.store.queue.enqueue(unrejectOperation(this.url, suggestion.id));
    this.render();
    this.onChange([suggestion.span.paragraph_id]);
    /** @type {HTMLElement | null} */ (this.$list.querySelector(
      `.js-suggestion[data-suggestion="${CSS.escape(suggestion.id)}"] .js-suggestion-accept`,
    ))?.focus();
  }

  /** @param {Suggestion} suggestion */
  edit(suggestion) {
    if (this.decision(suggestion) !== null) return;
    this.editing = suggestion.id;
    this.onEdit(suggestion);
    this.render();
  }

  cancelEdit() {
    if (this.editing === null) return;
    this.editing = null;
    this.render();
  }

  /**
   * An Edit left unfinished before a reload (annotator/draft): editing again, when the
   * suggestion is still undecided in the Current Paragraph.
   * @param {string} id
   */
  resumeEditing(id) {
    const suggestion = this.byId.get(id);
    if (!suggestion || suggestion.span.paragraph_id !== this.position || this.decision(suggestion) !== null) return;
    this.editing = id;
    this.render();
  }

  /**
   * The fields an Add takes from the suggestion being edited (none when not editing).
   * @returns {{suggestion_id?: string}}
   */
  takeEditing() {
    const id = this.editing;
    this.editing = null;
    if (!id || !this.byId.has(id) || this.decision(/** @type {Suggestion} */ (this.byId.get(id))) !== null) return {};
    return { suggestion_id: id };
  }

  /**
   * An Add made from an edited suggestion was recorded.
   * @param {Annotation} annotation
   */
  added(annotation) {
    const id = /** @type {any} */ (annotation).suggestion_id;
    const suggestion = id ? this.byId.get(id) : undefined;
    if (suggestion) this.decided(suggestion, annotation);
    else this.render();
  }

  /**
   * After a decision: redraw, and take the focus to the next undecided suggestion (or to
   * the navigation when none is left).
   * @param {Suggestion} suggestion
   * @param {Annotation | null} _annotation
   */
  decided(suggestion, _annotation) {
    this.render();
    this.onChange([suggestion.span.paragraph_id]);
    const $next = /** @type {HTMLElement | null} */ (this.$list.querySelector('.js-suggestion-accept'));
    const $nav = /** @type {HTMLElement | null} */ (this.$root.querySelector('.js-next:not([disabled]), .js-submit:not([disabled])'));
    ($next ?? $nav)?.focus({ preventScroll: true });
  }

  /**
   * The server refused a rejection or its undo for good: back to what it knows.
   * @param {{operation: any}} detail
   */
  refused({ operation }) {
    if (!operation?.suggestion) return;
    if (operation.kind === REJECT) this.rejected.delete(operation.suggestion);
    this.render();
    this.onChange([this.position]);
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

/**
 * The Add an Accept makes: the suggestion as it is.
 * @param {Suggestion} suggestion
 */
export function acceptFields(suggestion) {
  return {
    category: suggestion.category,
    span: suggestion.span,
    paired_span: suggestion.paired_span,
    comment: suggestion.comment,
    suggestion_id: suggestion.id,
  };
}

/**
 * Whether an annotation keeps everything the suggestion said (the server's rule, in
 * app/suggestions/decisions.py): else it is an edit.
 * @param {Suggestion} suggestion
 * @param {Annotation} annotation
 */
export function isAccept(suggestion, annotation) {
  const same = (/** @type {WireSpan | null} */ a, /** @type {WireSpan | null} */ b) =>
    a === b || Boolean(a && b && a.paragraph_id === b.paragraph_id && a.start === b.start && a.end === b.end);
  return (
    annotation.category === suggestion.category &&
    same(annotation.span, suggestion.span) &&
    same(annotation.paired_span ?? null, suggestion.paired_span ?? null) &&
    (annotation.comment ?? null) === (suggestion.comment ?? null)
  );
}

/**
 * @param {string} tag
 * @param {string} className
 * @param {string} [text]
 */
function element(tag, className, text) {
  const $element = document.createElement(tag);
  $element.className = className;
  if (text !== undefined) $element.textContent = text;
  return $element;
}

/**
 * A button named by its word, described by the suggestion's text (screen readers hear
 * which suggestion it acts on).
 * @param {string} label
 * @param {string} action
 * @param {string} classes
 * @param {string} describedBy
 */
function button(label, action, classes, describedBy) {
  const $button = /** @type {HTMLButtonElement} */ (element('button', `button ${classes}`, label));
  $button.type = 'button';
  $button.dataset.action = action;
  $button.setAttribute('aria-describedby', describedBy);
  return $button;
}
