/**
 * Coreference cues: hovering a mention of an entity highlights its other mentions in grey.
 *
 * Drawn with the CSS Custom Highlight API (`CSS.highlights`, styled by `::highlight(coref)`),
 * so no element is inserted into the paragraphs; browsers without it get no cues.
 *
 * @module annotator/coref
 */

import { boundaryToOffset, unitsToRange } from '../lib/anchoring.mjs';

const HIGHLIGHT_NAME = 'coref';

/** @typedef {{start: number, end: number, entity: string}} Mention  UTF-16 offsets */

/**
 * @param {string} str
 * @returns {string}
 */
function escapeRegExp(str) {
  return str.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether this browser can draw the cues. */
export function corefSupported() {
  return typeof CSS !== 'undefined' && 'highlights' in CSS && typeof Highlight === 'function';
}

export class CorefCues {
  /**
   * @param {{$scope: HTMLElement, entities: string[], paragraphs: () => HTMLElement[]}} options
   *   $scope: where the pointer is watched; paragraphs(): the paragraph elements shown now.
   */
  constructor({ $scope, entities, paragraphs }) {
    this.$scope = $scope;
    this.paragraphs = paragraphs;
    const names = [...new Set(entities.filter((e) => typeof e === 'string' && e.trim()))];
    names.sort((a, b) => b.length - a.length); // longest first: "Lord Findon" before "Lord"
    // Whole words, case-sensitive: no letter, digit or underscore on either side.
    this.pattern = names.length
      ? new RegExp(`(?<![\\p{L}\\p{N}_])(?:${names.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}_])`, 'gu')
      : null;
    /** @type {Map<string, Mention[]>} text -> mentions */
    this.cache = new Map();
    this.active = null;
    this.frame = 0;
    /** @type {{x: number, y: number, target: EventTarget | null} | null} */
    this.pointer = null;
    this.listeners = new AbortController();
    const { signal } = this.listeners;
    this.enabled = Boolean(this.pattern) && corefSupported();
    if (this.enabled) {
      $scope.addEventListener(
        'mousemove',
        (event) => {
          this.pointer = { x: event.clientX, y: event.clientY, target: event.target };
          if (!this.frame) this.frame = requestAnimationFrame(() => this.update());
        },
        { signal },
      );
      $scope.addEventListener('mouseleave', () => this.clear(), { signal });
    }
  }

  /**
   * The entity mentions of a paragraph's text, cached by text.
   * @param {string} text
   * @returns {Mention[]}
   */
  mentions(text) {
    let found = this.cache.get(text);
    if (!found) {
      found = [];
      if (this.pattern) {
        for (const match of text.matchAll(this.pattern)) {
          found.push({ start: match.index ?? 0, end: (match.index ?? 0) + match[0].length, entity: match[0] });
        }
      }
      this.cache.set(text, found);
    }
    return found;
  }

  update() {
    this.frame = 0;
    const pointer = this.pointer;
    const target = pointer?.target;
    const $paragraph = target instanceof Element ? target.closest('[data-paragraph]') : null;
    if (!pointer || !$paragraph) {
      this.clear();
      return;
    }
    const entity = this.entityAt($paragraph, pointer.x, pointer.y);
    if (entity === this.active) return;
    if (!entity) {
      this.clear();
      return;
    }
    this.show(entity);
  }

  /**
   * The entity mentioned at a viewport point inside a paragraph, or null.
   * @param {Element} $paragraph
   * @param {number} x
   * @param {number} y
   * @returns {string | null}
   */
  entityAt($paragraph, x, y) {
    const caret = caretAt(x, y);
    if (!caret || !$paragraph.contains(caret.node)) return null;
    const offset = boundaryToOffset($paragraph, caret.node, caret.offset);
    const text = $paragraph.textContent ?? '';
    const mention = this.mentions(text).find((m) => m.start <= offset && offset <= m.end);
    return mention ? mention.entity : null;
  }

  /**
   * Highlight every shown mention of an entity.
   * @param {string} entity
   */
  show(entity) {
    const ranges = [];
    for (const $paragraph of this.paragraphs()) {
      const text = $paragraph.textContent ?? '';
      for (const mention of this.mentions(text)) {
        if (mention.entity === entity) ranges.push(unitsToRange($paragraph, mention.start, mention.end));
      }
    }
    CSS.highlights.set(HIGHLIGHT_NAME, new Highlight(...ranges));
    this.active = entity;
  }

  /** Remove the cues (also needed after paragraphs are re-rendered: old ranges are stale). */
  clear() {
    if (this.enabled) CSS.highlights.delete(HIGHLIGHT_NAME);
    this.active = null;
  }

  destroy() {
    cancelAnimationFrame(this.frame);
    this.listeners.abort();
    this.clear();
  }
}

/**
 * The text position under a viewport point.
 * @param {number} x
 * @param {number} y
 * @returns {{node: Node, offset: number} | null}
 */
function caretAt(x, y) {
  const doc = /** @type {any} */ (document);
  if (typeof doc.caretPositionFromPoint === 'function') {
    const position = doc.caretPositionFromPoint(x, y);
    return position ? { node: position.offsetNode, offset: position.offset } : null;
  }
  if (typeof doc.caretRangeFromPoint === 'function') {
    const range = doc.caretRangeFromPoint(x, y);
    return range ? { node: range.startContainer, offset: range.startOffset } : null;
  }
  return null;
}
