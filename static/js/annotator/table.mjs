/**
 * The "Previous annotations" table: one row per live annotation, each with a "Show in
 * text" button and a Remove button that asks for confirmation in the row itself (no
 * native dialogs).
 *
 * @module annotator/table
 */

import { codePointLength, sliceCodePoints } from '../lib/anchoring.mjs';
import { button, element, ownDirection } from '../lib/dom.mjs';
import { t } from '../lib/i18n.mjs';

/**
 * @typedef {import('./wire.mjs').WireSpan} WireSpan
 * @typedef {import('./wire.mjs').Annotation} Annotation
 * @typedef {import('./wire.mjs').Category} Category
 */

const CONTEXT_WORDS = 4;

/**
 * Compare annotations by paragraph, then start, then creation.
 * @param {Annotation} a
 * @param {Annotation} b
 * @returns {number}
 */
export function byPosition(a, b) {
  return (
    a.span.paragraph_id - b.span.paragraph_id ||
    a.span.start - b.span.start ||
    a.span.end - b.span.end ||
    String(a.created_at ?? '').localeCompare(String(b.created_at ?? ''))
  );
}

const TEXT = {
  severity: t('Severity:'),
};

export class AnnotationTable {
  /**
   * @param {{$body: HTMLElement, $empty: HTMLElement, categories: Map<string, Category>,
   *   paragraphText: (id: number) => string | undefined,
   *   paragraphName?: (id: number) => string, severityName?: ((key: string | null | undefined) => string | null) | null}} options
   *   severityName: a severity's name, shown under the category (taxonomies with severities)
   */
  constructor({ $body, $empty, categories, paragraphText, paragraphName = (id) => String(id + 1), severityName = null }) {
    this.$body = $body;
    this.severityName = severityName;
    this.$empty = $empty;
    this.categories = categories;
    this.paragraphText = paragraphText;
    this.paragraphName = paragraphName;
    /** @type {Map<string, {row: HTMLTableRowElement, annotation: Annotation}>} */
    this.rows = new Map();
    this.readOnly = false;
  }

  /**
   * Replace all rows.
   * @param {Annotation[]} annotations
   */
  renderAll(annotations) {
    this.rows.clear();
    const fragment = document.createDocumentFragment();
    for (const annotation of [...annotations].sort(byPosition)) {
      const row = this.buildRow(annotation);
      this.rows.set(annotation.id, { row, annotation });
      fragment.append(row);
    }
    this.$body.replaceChildren(fragment);
    this.updateEmpty();
  }

  /**
   * Insert one row at its sorted place.
   * @param {Annotation} annotation
   */
  add(annotation) {
    const row = this.buildRow(annotation);
    let before = null;
    for (const entry of this.rows.values()) {
      const goesBefore = byPosition(annotation, entry.annotation) < 0;
      if (goesBefore && (!before || byPosition(entry.annotation, before.annotation) < 0)) before = entry;
    }
    this.$body.insertBefore(row, before ? before.row : null);
    this.rows.set(annotation.id, { row, annotation });
    this.updateEmpty();
  }

  /** @param {string} id */
  remove(id) {
    const entry = this.rows.get(id);
    if (!entry) return;
    entry.row.remove();
    this.rows.delete(id);
    this.updateEmpty();
  }

  /** @param {boolean} readOnly */
  setReadOnly(readOnly) {
    this.readOnly = readOnly;
    for (const { row } of this.rows.values()) {
      for (const button of row.querySelectorAll('button:not(.js-show)')) button.disabled = readOnly;
    }
  }

  updateEmpty() {
    this.$empty.hidden = this.rows.size > 0;
  }

  /**
   * @param {Annotation} annotation
   * @returns {HTMLTableRowElement}
   */
  buildRow(annotation) {
    const category = this.categories.get(annotation.category);
    const row = element('tr', 'previous__row js-annotation-row');
    row.setAttribute('role', 'row'); // explicit: the CSS lays rows out as grids
    row.dataset.annotation = annotation.id;

    const categoryCell = cell('previous__category');
    const swatch = element('span', 'swatch');
    swatch.setAttribute('aria-hidden', 'true');
    // No colour: a category no longer in the taxonomy (the swatch is base.css's grey).
    if (category?.color) swatch.style.setProperty('--cat-color', category.color);
    // An imported error without a label has no category (researchers' read-only view).
    categoryCell.append(swatch, ownDirection('span', category?.name ?? annotation.category ?? '–'));
    const severity = this.severityName?.(annotation.severity);
    if (severity) {
      const $severity = element('span', 'previous__severity');
      $severity.append(TEXT.severity, ' ', ownDirection('span', severity));
      categoryCell.append($severity);
    }

    const spanCell = cell('previous__span');
    spanCell.append(this.snippet(annotation.span));
    if (annotation.paired_span) {
      const paired = element('div', 'previous__paired');
      paired.append(element('span', 'previous__paired-label', t('Paired with: ')), this.snippet(annotation.paired_span));
      spanCell.append(paired);
    }

    const paragraphCell = cell('previous__paragraph');
    paragraphCell.textContent = this.paragraphName(annotation.span.paragraph_id);
    if (annotation.paired_span && annotation.paired_span.paragraph_id !== annotation.span.paragraph_id) {
      paragraphCell.textContent += t(' (and {n})', { n: this.paragraphName(annotation.paired_span.paragraph_id) });
    }

    const commentCell = cell('previous__comment');
    commentCell.textContent = annotation.comment ?? '';

    const actionCell = cell('previous__actions');
    actionCell.append(...this.actionButtons());
    row.append(categoryCell, spanCell, paragraphCell, commentCell, actionCell);
    return row;
  }

  /** @returns {HTMLButtonElement[]} "Show in text" (always usable) and Remove */
  actionButtons() {
    const show = button(t('Show in text'), 'button button--small button--secondary js-show');
    const remove = button(t('Remove'), 'button button--small button--secondary js-remove');
    remove.disabled = this.readOnly;
    return [show, remove];
  }

  /**
   * Show "Remove this annotation?" with confirm/cancel buttons in the row.
   * @param {string} id
   */
  askToConfirm(id) {
    const entry = this.rows.get(id);
    if (!entry) return;
    const actions = /** @type {HTMLElement} */ (entry.row.querySelector('.previous__actions'));
    const question = element('span', 'previous__question', t('Remove this annotation?'));
    const confirm = button(t('Yes, remove'), 'button button--small button--danger js-remove-confirm');
    const cancel = button(t('Cancel'), 'button button--small button--secondary js-remove-cancel');
    actions.replaceChildren(question, confirm, cancel);
    entry.row.classList.add('is-confirming');
    confirm.focus();
  }

  /**
   * Back from the confirmation to the Remove button.
   * @param {string} id
   */
  cancelConfirm(id) {
    const entry = this.rows.get(id);
    if (!entry) return;
    const actions = /** @type {HTMLElement} */ (entry.row.querySelector('.previous__actions'));
    const [show, remove] = this.actionButtons();
    actions.replaceChildren(show, remove);
    entry.row.classList.remove('is-confirming');
    remove.focus();
  }

  /**
   * The span in bold inside a few words of its paragraph.
   * @param {WireSpan} span
   * @returns {HTMLElement}
   */
  snippet(span) {
    const wrapper = element('span', 'snippet');
    const text = this.paragraphText(span.paragraph_id);
    const strong = element('strong', '', span.text);
    if (text === undefined) {
      wrapper.append(strong);
      return wrapper;
    }
    const before = lastWords(sliceCodePoints(text, 0, span.start), CONTEXT_WORDS);
    const after = firstWords(sliceCodePoints(text, span.end, codePointLength(text)), CONTEXT_WORDS);
    wrapper.append(before, strong, after);
    return wrapper;
  }
}

/**
 * @param {string} className
 * @returns {HTMLTableCellElement}
 */
function cell(className) {
  const td = element('td', className);
  td.setAttribute('role', 'cell');
  return td;
}

/**
 * The last n words of a text, with an ellipsis when cut.
 * @param {string} text
 * @param {number} n
 * @returns {string}
 */
function lastWords(text, n) {
  const words = text.split(/(\s+)/);
  // Keep the separator before the span (words[] alternates word, space, word...).
  const kept = words.slice(-(2 * n));
  const joined = kept.join('').replace(/\n+/g, ' ');
  return kept.length < words.length ? `…${joined.trimStart()}` : joined;
}

/**
 * The first n words of a text, with an ellipsis when cut.
 * @param {string} text
 * @param {number} n
 * @returns {string}
 */
function firstWords(text, n) {
  const words = text.split(/(\s+)/);
  const kept = words.slice(0, 2 * n);
  const joined = kept.join('').replace(/\n+/g, ' ');
  return kept.length < words.length ? `${joined.trimEnd()}…` : joined;
}
