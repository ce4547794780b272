/**
 * Building elements: the one place that calls `document.createElement`. Text goes in as
 * `textContent`, never parsed as HTML, so text from documents, taxonomies and workers is
 * safe to pass (STYLE: server data and worker text are data, never markup).
 *
 * Text that the taxonomy or a document supplies is laid out in its own direction
 * (`ownDirection`): an English category name inside the Arabic interface keeps its
 * punctuation on the right side, an Arabic one inside the English interface reads right
 * to left (`dir="auto"`: the direction of its first strong character).
 *
 * @module lib/dom
 */

/**
 * An element with classes and, optionally, its text.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className] space-separated classes ('' for none)
 * @param {string} [text] its textContent
 * @returns {HTMLElementTagNameMap[K]}
 */
export function element(tag, className = '', text = undefined) {
  const $element = document.createElement(tag);
  if (className) $element.className = className;
  if (text !== undefined) $element.textContent = text;
  return $element;
}

/**
 * An element holding `text` in its own direction (`dir="auto"`).
 * @param {keyof HTMLElementTagNameMap} tag
 * @param {string} text
 * @param {string} [className]
 * @returns {HTMLElement}
 */
export function ownDirection(tag, text, className = '') {
  const $element = element(tag, className, text);
  $element.dir = 'auto';
  return $element;
}

/**
 * A button that never submits its form unless asked to (`type`), named by its text.
 * @param {string} label its text
 * @param {string} className
 * @param {{action?: string, describedBy?: string, id?: string, type?: 'button' | 'submit'}} [options]
 *   action: `data-action`, what a click does (the page's one listener reads it);
 *   describedBy: `aria-describedby`, what it acts on (screen readers hear which item)
 * @returns {HTMLButtonElement}
 */
export function button(label, className, { action, describedBy, id, type = 'button' } = {}) {
  const $button = element('button', className, label);
  $button.type = type;
  if (action) $button.dataset.action = action;
  if (id) $button.id = id;
  if (describedBy) $button.setAttribute('aria-describedby', describedBy);
  return $button;
}
