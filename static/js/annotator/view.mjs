/**
 * The text of the document: one element per paragraph reached so far, moved between the
 * Context and Current Paragraph regions as the worker navigates, with every annotation
 * drawn as highlights. Only the paragraphs that change are re-rendered.
 *
 * @module annotator/view
 */

import { element } from '../lib/dom.mjs';
import { renderParagraph } from '../lib/highlight.mjs';
import { spanToRange } from '../lib/anchoring.mjs';

/**
 * @typedef {import('./wire.mjs').Annotation} Annotation
 * @typedef {import('./wire.mjs').Category} Category
 * @typedef {import('./wire.mjs').WireSpan} WireSpan
 */

const SHOWN_MS = 2500; // how long "Show in text" keeps the highlights outlined
/** A category no longer in the taxonomy: base.css's grey, unlike any category. */
const FALLBACK_COLOR = 'var(--category-missing)';

export class DocumentView {
  /**
   * @param {{$context: HTMLElement, $contextEmpty: HTMLElement, $current: HTMLElement,
   *   categories: Map<string, Category>,
   *   extraHighlights?: (paragraphId: number) => import('../lib/highlight.mjs').Highlight[]}} options
   *   extraHighlights: more highlights of a paragraph, drawn with the annotations (suggestions)
   */
  constructor({ $context, $contextEmpty, $current, categories, extraHighlights }) {
    this.extraHighlights = extraHighlights ?? (() => []);
    this.$context = $context;
    this.$contextEmpty = $contextEmpty;
    this.$current = $current;
    this.categories = categories;
    /** @type {Map<number, string>} */
    this.texts = new Map();
    /** @type {Map<number, HTMLElement>} */
    this.elements = new Map();
    this.position = -1;
  }

  /**
   * Add paragraphs (once each); they are drawn when shown.
   * @param {{paragraph_id: number, text: string}[]} paragraphs
   */
  addParagraphs(paragraphs) {
    for (const { paragraph_id: id, text } of paragraphs) {
      if (this.texts.has(id)) continue;
      this.texts.set(id, text);
      const $p = element('p', 'paragraph js-paragraph', text);
      $p.dataset.paragraph = String(id);
      this.elements.set(id, $p);
    }
  }

  /**
   * @param {number} id
   * @returns {string | undefined}
   */
  text(id) {
    return this.texts.get(id);
  }

  /**
   * @param {number} id
   * @returns {HTMLElement | undefined}
   */
  element(id) {
    return this.elements.get(id);
  }

  /** The paragraph elements on screen (Context, then Current Paragraph). */
  shown() {
    const shown = [];
    for (let id = 0; id <= this.position; id += 1) {
      const $p = this.elements.get(id);
      if ($p) shown.push($p);
    }
    return shown;
  }

  /**
   * Show paragraphs before `position` in Context and `position` as the Current Paragraph.
   * @param {number} position
   */
  show(position) {
    const previous = this.position;
    this.position = position;
    const current = this.elements.get(position);
    if (previous >= 0 && position === previous + 1 && this.$current.firstElementChild) {
      // The usual step forward: move one paragraph instead of rebuilding the Context.
      this.$context.append(/** @type {HTMLElement} */ (this.$current.firstElementChild));
    } else {
      const fragment = document.createDocumentFragment();
      for (let id = 0; id < position; id += 1) {
        const $p = this.elements.get(id);
        if ($p) fragment.append($p);
      }
      this.$context.replaceChildren(fragment);
    }
    this.$contextEmpty.hidden = position > 0;
    this.$context.hidden = position === 0;
    if (current) this.$current.replaceChildren(current);
    else this.$current.replaceChildren();
    // Scroll after the browser lays the page out anyway, rather than forcing a layout now.
    requestAnimationFrame(() => {
      this.$context.scrollTop = this.$context.scrollHeight;
    });
  }

  /**
   * Draw the highlights of the given paragraphs (all when `ids` is omitted).
   * @param {Iterable<Annotation>} annotations all live annotations
   * @param {Iterable<number>} [ids]
   */
  renderHighlights(annotations, ids) {
    const wanted = ids ? new Set(ids) : new Set(this.texts.keys());
    /** @type {Map<number, import('../lib/highlight.mjs').Highlight[]>} */
    const byParagraph = new Map([...wanted].map((id) => [id, []]));
    for (const annotation of annotations) {
      const category = this.categories.get(annotation.category);
      const color = category?.color || FALLBACK_COLOR;
      const name = category?.name ?? annotation.category;
      const comment = annotation.comment ? `\n${annotation.comment}` : '';
      const spans = [[annotation.span, '']];
      if (annotation.paired_span) spans.push([annotation.paired_span, 'paired']);
      for (const [span, role] of /** @type {[WireSpan, string][]} */ (spans)) {
        const list = byParagraph.get(span.paragraph_id);
        if (!list) continue;
        list.push({
          id: role ? `${annotation.id}:${role}` : annotation.id,
          start: span.start,
          end: span.end,
          color,
          className: role ? 'hl-annotation hl-annotation--paired' : 'hl-annotation',
          title: role ? `${name} (paired span)${comment}` : `${name}${comment}`,
          dataset: { annotation: annotation.id },
        });
      }
    }
    for (const [id, highlights] of byParagraph) {
      highlights.push(...this.extraHighlights(id));
      const $p = this.elements.get(id);
      const text = this.texts.get(id);
      if ($p && text !== undefined) renderParagraph($p, text, highlights);
    }
  }

  /**
   * Mark (or unmark) every highlight of the given annotations as linked: a span and its
   * paired span light up together.
   * @param {HTMLElement} $scope
   * @param {string[]} ids
   */
  static link($scope, ids) {
    DocumentView.unlink($scope);
    for (const id of ids) {
      for (const $mark of $scope.querySelectorAll(`.hl[data-annotation~="${CSS.escape(id)}"]`)) {
        $mark.classList.add('is-linked');
      }
    }
  }

  /**
   * Hover: light up the annotation(s) under the pointer (a highlight or a table row) with
   * its highlights and row; leaving clears them.
   * @param {HTMLElement} $scope
   * @param {Event} event mouseover or mouseout
   */
  static linkHovered($scope, event) {
    const $source = /** @type {HTMLElement | null} */ (
      /** @type {HTMLElement} */ (event.target).closest('.hl[data-annotation], .js-annotation-row')
    );
    if (!$source) return;
    const ids = event.type === 'mouseover' ? ($source.dataset.annotation ?? '').split(' ').filter(Boolean) : [];
    DocumentView.link($scope, ids);
  }

  /** @param {HTMLElement} $scope */
  static unlink($scope) {
    for (const $mark of $scope.querySelectorAll('.hl.is-linked')) $mark.classList.remove('is-linked');
  }

  /**
   * Scroll an annotation's highlight in a shown paragraph into view (the Context box
   * scrolls too) and outline its highlights for a moment. The outline is its own class:
   * hover links are cleared as the page scrolls under the pointer.
   * @param {string} id
   * @param {number} paragraph the paragraph of its span
   */
  reveal(id, paragraph) {
    const selector = `.hl[data-annotation~="${CSS.escape(id)}"]`;
    const $mark = this.elements.get(paragraph)?.querySelector(selector);
    if (!$mark?.isConnected) return;
    $mark.scrollIntoView({ block: 'center', inline: 'nearest' });
    this.unreveal();
    for (const $p of this.shown()) {
      for (const $shown of $p.querySelectorAll(selector)) $shown.classList.add('is-shown');
    }
    this.revealTimer = window.setTimeout(() => this.unreveal(), SHOWN_MS);
  }

  unreveal() {
    window.clearTimeout(this.revealTimer);
    for (const $p of this.elements.values()) {
      for (const $shown of $p.querySelectorAll('.hl.is-shown')) $shown.classList.remove('is-shown');
    }
  }

  destroy() {
    window.clearTimeout(this.revealTimer);
  }

  /**
   * A DOM range for a wire span, or null when its paragraph is not loaded.
   * @param {WireSpan} span
   * @returns {Range | null}
   */
  range(span) {
    const $p = this.elements.get(span.paragraph_id);
    return $p ? spanToRange($p, span) : null;
  }
}
