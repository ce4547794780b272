/**
 * Text the taxonomy or a document supplies, laid out in its own direction: an English
 * category name inside the Arabic interface keeps its punctuation on the right side, an
 * Arabic one inside the English interface reads right to left (`dir="auto"`: the
 * direction of its first strong character).
 *
 * @module lib/direction
 */

/**
 * An element holding `text` in its own direction.
 * @param {string} tag
 * @param {string} text
 * @param {string} [className]
 * @returns {HTMLElement}
 */
export function ownDirection(tag, text, className = '') {
  const $element = document.createElement(tag);
  if (className) $element.className = className;
  $element.dir = 'auto';
  $element.textContent = text;
  return $element;
}
