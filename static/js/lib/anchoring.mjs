/**
 * Anchoring: DOM ranges <-> spans of a paragraph's stored text.
 *
 * A span is `{start, end, text}` relative to one paragraph element whose textContent is
 * exactly the stored paragraph text. Offsets are Unicode code points (Python `str`
 * indexing), while the DOM counts UTF-16 units: the conversion happens here, at the edge,
 * and nowhere else. An emoji before a span therefore counts as 1, as on the server.
 *
 * @module lib/anchoring
 */

/** @typedef {{start: number, end: number, text: string}} Span */

const WHITESPACE = /\s/u;
const SURROGATES = /[\uD800-\uDFFF]/; // no u flag: it must see the halves of a pair

/**
 * Number of Unicode code points in a string (what Python's len() says).
 * @param {string} str
 * @returns {number}
 */
export function codePointLength(str) {
  if (!SURROGATES.test(str)) return str.length;
  let count = 0;
  // for...of iterates by code point, not by UTF-16 unit.
  for (const _char of str) count += 1;
  return count;
}

/**
 * The part of a string between two code-point offsets (Python's str[start:end]).
 * @param {string} str
 * @param {number} start
 * @param {number} [end]
 * @returns {string}
 */
export function sliceCodePoints(str, start, end) {
  const from = codePointToUtf16(str, start);
  const to = end === undefined ? str.length : codePointToUtf16(str, end);
  return str.slice(from, to);
}

/**
 * UTF-16 offset of a code-point offset (clamped to the string).
 * @param {string} str
 * @param {number} codePoints
 * @returns {number}
 */
export function codePointToUtf16(str, codePoints) {
  const point = Math.max(0, codePoints);
  return /** @type {number} */ (utf16Offsets(str, [point]).get(point));
}

/**
 * UTF-16 offsets of code-point offsets, in one pass over the string: the one conversion
 * from code points to the DOM's units (highlights and ranges both use it). Offsets past
 * the end map to the string's length.
 * @param {string} str
 * @param {number[]} points code-point offsets, sorted ascending, none negative
 * @returns {Map<number, number>}
 */
export function utf16Offsets(str, points) {
  const result = new Map();
  if (!SURROGATES.test(str)) {
    for (const point of points) result.set(point, Math.min(point, str.length));
    return result;
  }
  let index = 0;
  let units = 0;
  let count = 0;
  for (const char of str) {
    while (index < points.length && points[index] === count) result.set(points[index++], units);
    if (index >= points.length) break;
    units += char.length;
    count += 1;
  }
  while (index < points.length) result.set(points[index++], units);
  return result;
}

/**
 * Code-point offset of a UTF-16 offset. An offset that falls inside a surrogate pair is
 * counted as before the pair.
 * @param {string} str
 * @param {number} units
 * @returns {number}
 */
export function utf16ToCodePoint(str, units) {
  return codePointLength(str.slice(0, units));
}

/**
 * The paragraph's text nodes in document order.
 * @param {Element} root
 * @returns {Text[]}
 */
function textNodes(root) {
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  /** @type {Text[]} */
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(/** @type {Text} */ (node));
  return nodes;
}

/**
 * UTF-16 offset, within root's textContent, of a DOM boundary point inside root.
 * @param {Element} root
 * @param {Node} container
 * @param {number} offset
 * @returns {number}
 */
export function boundaryToOffset(root, container, offset) {
  if (container.nodeType === Node.TEXT_NODE) {
    let total = 0;
    for (const node of textNodes(root)) {
      if (node === container) return total + offset;
      total += node.length;
    }
    return total;
  }
  // An element boundary (container, offset) sits between children: count the text of
  // every text node that starts before it.
  const boundary = root.ownerDocument.createRange();
  boundary.setStart(container, offset);
  let total = 0;
  for (const node of textNodes(root)) {
    if (boundary.comparePoint(node, 0) >= 0) break;
    total += node.length;
  }
  return total;
}

/**
 * The span of `paragraphEl`'s text covered by `range`, clipped to the paragraph and with
 * leading/trailing whitespace trimmed; null when nothing but whitespace is covered.
 * @param {Range} range
 * @param {Element} paragraphEl
 * @returns {Span | null}
 */
export function rangeToSpan(range, paragraphEl) {
  if (range.collapsed || !range.intersectsNode(paragraphEl)) return null;
  const text = paragraphEl.textContent ?? '';
  const startInside = paragraphEl.contains(range.startContainer);
  const endInside = paragraphEl.contains(range.endContainer);
  let start = startInside ? boundaryToOffset(paragraphEl, range.startContainer, range.startOffset) : 0;
  let end = endInside ? boundaryToOffset(paragraphEl, range.endContainer, range.endOffset) : text.length;
  // Never split a surrogate pair: widen to whole characters.
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start -= 1;
  if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end += 1;
  while (start < end && WHITESPACE.test(text[start])) start += 1;
  while (end > start && WHITESPACE.test(text[end - 1])) end -= 1;
  if (start >= end) return null;
  const cpStart = utf16ToCodePoint(text, start);
  const spanText = text.slice(start, end);
  return { start: cpStart, end: cpStart + codePointLength(spanText), text: spanText };
}

/**
 * @param {number} code
 * @returns {boolean}
 */
function isLowSurrogate(code) {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The DOM boundary point at a UTF-16 offset of root's text.
 * @param {Element} root
 * @param {number} offset
 * @param {boolean} preferNext at a node boundary, take the start of the next text node
 * @returns {{node: Node, offset: number}}
 */
export function offsetToBoundary(root, offset, preferNext = false) {
  const nodes = textNodes(root);
  let total = 0;
  for (let i = 0; i < nodes.length; i += 1) {
    const node = nodes[i];
    const next = total + node.length;
    if (offset < next || (offset === next && !(preferNext && i + 1 < nodes.length))) {
      return { node, offset: offset - total };
    }
    total = next;
  }
  return { node: root, offset: root.childNodes.length };
}

/**
 * A DOM Range covering a code-point span of the paragraph (e.g. to re-select or highlight it).
 * @param {Element} paragraphEl
 * @param {{start: number, end: number}} span
 * @returns {Range}
 */
export function spanToRange(paragraphEl, span) {
  const text = paragraphEl.textContent ?? '';
  const start = Math.max(0, span.start);
  const end = Math.max(start, span.end);
  const units = utf16Offsets(text, [start, end]);
  return unitsToRange(paragraphEl, /** @type {number} */ (units.get(start)), /** @type {number} */ (units.get(end)));
}

/**
 * A DOM Range for a UTF-16 offset pair of the paragraph's text.
 * @param {Element} paragraphEl
 * @param {number} start
 * @param {number} end
 * @returns {Range}
 */
export function unitsToRange(paragraphEl, start, end) {
  const range = paragraphEl.ownerDocument.createRange();
  const from = offsetToBoundary(paragraphEl, start, true);
  const to = offsetToBoundary(paragraphEl, end, false);
  range.setStart(from.node, from.offset);
  range.setEnd(to.node, to.offset);
  return range;
}
