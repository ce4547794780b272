/**
 * Selecting a span without a mouse: with the Current Paragraph focused, the arrow keys
 * move a caret word by word (Shift extends), Up and Down go to the paragraph before or
 * after (for a paired span in the Context), Home and End to the first and last word, and
 * Enter takes the words as a DOM Range, read like a mouse selection. The caret is drawn
 * with the CSS Custom Highlight API: nothing is inserted into the paragraphs.
 *
 * Left and Right follow the screen: in a right-to-left paragraph (Arabic, Hebrew) → goes
 * to the word on its right, which is the one before in text order, and ← to the next.
 * The paragraph's direction is the browser's computed one, or, where the paragraph lays
 * itself out by its first strong character (`unicode-bidi: plaintext`, a document with
 * no language), that character's.
 *
 * Offsets here are UTF-16 units of the paragraph's text (what the DOM counts); the Range
 * goes through lib/anchoring.mjs, the one place that converts them to code points.
 *
 * @module annotator/keyboard
 */

import { unitsToRange } from '../lib/anchoring.mjs';

const HIGHLIGHT = 'keyboard-selection';
const SPACE_ONLY = /^\s+$/u;
// A strong character, and the right-to-left scripts among them (Unicode bidi classes R
// and AL, as dir="auto" and unicode-bidi: plaintext read them).
const STRONG = /[\p{L}\p{Mn}]/u;
const RIGHT_TO_LEFT = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Adlam}\p{Script=Samaritan}\p{Script=Mandaic}]/u;

/**
 * The direction a paragraph is laid out in on screen.
 * @param {HTMLElement} $p
 * @returns {'ltr' | 'rtl'}
 */
export function paragraphDirection($p) {
  const style = window.getComputedStyle($p);
  if (style.unicodeBidi === 'plaintext') {
    const first = ($p.textContent ?? '').match(STRONG)?.[0];
    if (first) return RIGHT_TO_LEFT.test(first) ? 'rtl' : 'ltr';
  }
  return style.direction === 'rtl' ? 'rtl' : 'ltr';
}

/**
 * The words of a text as UTF-16 [start, end) pairs: every segment that is not whitespace
 * (words, numbers, punctuation, emoji), so that any span can be reached.
 * @param {string} text
 * @returns {{start: number, end: number}[]}
 */
export function words(text) {
  if (typeof Intl !== 'undefined' && 'Segmenter' in Intl) {
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });
    return [...segmenter.segment(text)]
      .filter(({ segment }) => !SPACE_ONLY.test(segment))
      .map(({ index, segment }) => ({ start: index, end: index + segment.length }));
  }
  return [...text.matchAll(/\S+/gu)].map((m) => ({ start: /** @type {number} */ (m.index), end: /** @type {number} */ (m.index) + m[0].length }));
}

export class KeyboardSelection {
  /**
   * @param {{$host: HTMLElement, shown: () => HTMLElement[], current: () => HTMLElement | undefined,
   *   onTake: (range: Range) => void, enabled: () => boolean}} options
   *   $host: the focusable element whose keys are read (the Current Paragraph's body);
   *   shown: the paragraph elements on screen, in order; current: the Current Paragraph.
   */
  constructor({ $host, shown, current, onTake, enabled }) {
    this.$host = $host;
    this.shown = shown;
    this.current = current;
    this.onTake = onTake;
    this.enabled = enabled;
    /** @type {{$p: HTMLElement, words: {start: number, end: number}[], anchor: number, focus: number} | null} */
    this.caret = null;
    /** Whether the caret is drawn. */
    this.visible = false;
    this.supported = typeof CSS !== 'undefined' && 'highlights' in CSS;
    this.listeners = new AbortController();
    const { signal } = this.listeners;
    this.$host.addEventListener('keydown', (event) => this.handleKey(event), { signal });
    this.$host.addEventListener('focusin', () => this.show(), { signal });
    this.$host.addEventListener('focusout', () => this.hide(), { signal });
  }

  /** @param {KeyboardEvent} event */
  handleKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || !this.enabled()) return;
    const keys = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End'];
    if (keys.includes(event.key)) {
      event.preventDefault();
      this.move(event.key, event.shiftKey);
    } else if (event.key === 'Enter' && this.caret && this.visible) {
      event.preventDefault();
      this.take();
    } else if (event.key === 'Escape' && this.caret && this.visible) {
      event.preventDefault();
      this.hide();
    }
  }

  /** Start in the Current Paragraph; draw the caret when reached from the keyboard. */
  show() {
    if (this.caret?.$p !== this.current()) this.caret = null;
    if (!this.enabled() || !this.ensureCaret() || !this.$host.matches(':focus-visible')) return;
    this.visible = true;
    this.draw();
  }

  /**
   * Move the caret (or extend the selection with Shift).
   * @param {string} key
   * @param {boolean} extend
   */
  move(key, extend) {
    const caret = this.ensureCaret();
    if (!caret) return;
    this.visible = true;
    const last = caret.words.length - 1;
    if (key === 'ArrowUp' || key === 'ArrowDown') {
      if (!extend) this.toParagraph(key === 'ArrowUp' ? -1 : 1);
    } else if (key === 'Home' || key === 'End') {
      caret.focus = key === 'Home' ? 0 : last;
      if (!extend) caret.anchor = caret.focus;
    } else {
      // Text order runs right to left on screen in an RTL paragraph: → goes back in it.
      const forward = (key === 'ArrowRight') === (paragraphDirection(caret.$p) === 'ltr');
      const step = forward ? 1 : -1;
      caret.focus = Math.max(0, Math.min(last, caret.focus + step));
      if (!extend) caret.anchor = caret.focus;
    }
    this.draw();
  }

  /**
   * Go to the paragraph before (-1) or after (+1) among those shown.
   * @param {number} direction
   */
  toParagraph(direction) {
    if (!this.caret) return;
    const shown = this.shown().filter(($p) => words($p.textContent ?? '').length);
    const index = shown.indexOf(this.caret.$p) + direction;
    if (index < 0 || index >= shown.length) return;
    this.caret = this.caretIn(shown[index], 0);
  }

  /**
   * The caret, (re)started in the Current Paragraph when it is gone from the page.
   * @returns {KeyboardSelection['caret']}
   */
  ensureCaret() {
    if (this.caret && this.shown().includes(this.caret.$p)) {
      // The paragraph may have been re-rendered (new highlights): its text is the same.
      return this.caret;
    }
    this.visible = false;
    const $current = this.current();
    this.caret = $current ? this.caretIn($current, 0) : null;
    return this.caret;
  }

  /**
   * @param {HTMLElement} $p
   * @param {number} index
   */
  caretIn($p, index) {
    const list = words($p.textContent ?? '');
    if (!list.length) return null;
    return { $p, words: list, anchor: index, focus: index };
  }

  /** The Range of the selected words. */
  range() {
    if (!this.caret) return null;
    const { $p, words: list, anchor, focus } = this.caret;
    const from = list[Math.min(anchor, focus)];
    const to = list[Math.max(anchor, focus)];
    return unitsToRange($p, from.start, to.end);
  }

  draw() {
    const range = this.range();
    if (!range) return;
    if (this.supported) CSS.highlights.set(HIGHLIGHT, new Highlight(range));
    scrollToRange(this.caret?.$p, range);
  }

  /** Hand the selected words over (step 1 or 3), as a mouse selection would be. */
  take() {
    const range = this.range();
    this.hide();
    if (range) this.onTake(range);
  }

  /** Stop drawing the caret (it stays where it was for the next key). */
  hide() {
    this.visible = false;
    if (this.caret) this.caret.anchor = this.caret.focus;
    if (this.supported) CSS.highlights.delete(HIGHLIGHT);
  }

  destroy() {
    this.listeners.abort();
    if (this.supported) CSS.highlights.delete(HIGHLIGHT);
  }
}

/**
 * Scroll the paragraph's scroll box (the Context) so that the range is in view.
 * @param {HTMLElement | undefined} $p
 * @param {Range} range
 */
function scrollToRange($p, range) {
  const $box = /** @type {HTMLElement | null | undefined} */ ($p?.closest('.text-box__body'));
  if (!$box || $box.scrollHeight <= $box.clientHeight) return;
  const rect = range.getBoundingClientRect();
  const box = $box.getBoundingClientRect();
  if (rect.top < box.top) $box.scrollTop -= box.top - rect.top + 8;
  else if (rect.bottom > box.bottom) $box.scrollTop += rect.bottom - box.bottom + 8;
}

const TEXT_FIELDS = 'input, textarea, select, [contenteditable=""], [contenteditable="true"]';

/**
 * Whether key presses on `target` are typing (a field that takes text), not shortcuts.
 * @param {EventTarget | null} target
 * @returns {boolean}
 */
export function isTextField(target) {
  if (!(target instanceof Element) || !target.matches(TEXT_FIELDS)) return false;
  return !(target instanceof HTMLInputElement && target.readOnly);
}

/**
 * What a key pressed on the annotator page asks for, by the page's shortcut rules:
 * Enter adds a complete annotation (except on a button or link), Escape closes the
 * innermost question (a row's Remove, then Submit) or clears the form, a category's
 * shortcut chooses it. Null: the key is not the page's (typing, modifiers, unknown keys).
 * @param {{key: string, target: EventTarget | null, ctrlKey?: boolean, metaKey?: boolean,
 *   altKey?: boolean, defaultPrevented?: boolean}} event
 * @param {{shortcuts: Map<string, string>, complete: boolean, asking: boolean}} page
 *   complete: the form holds a whole annotation; asking: the Submit question is open
 * @returns {{action: 'add' | 'clear' | 'cancel-submit'} | {action: 'cancel-remove', row: string}
 *   | {action: 'choose', category: string} | null}
 */
export function pageKeyAction(event, { shortcuts, complete, asking }) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return null;
  if (isTextField(event.target)) return null;
  const $target = event.target instanceof Element ? event.target : null;
  if (event.key === 'Enter') {
    if ($target?.closest('button, a, summary') || !complete) return null;
    return { action: 'add' };
  }
  if (event.key === 'Escape') {
    const row = /** @type {HTMLElement | null} */ ($target?.closest('.js-annotation-row.is-confirming'))?.dataset
      .annotation;
    if (row) return { action: 'cancel-remove', row };
    return { action: asking ? 'cancel-submit' : 'clear' };
  }
  const category = shortcuts.get(event.key);
  return category ? { action: 'choose', category } : null;
}
