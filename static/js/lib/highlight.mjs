/**
 * Drawing highlights inside a paragraph element without changing its text.
 *
 * Public, stable interface (the validator page imports it too):
 *
 *   renderParagraph(paragraphEl, text, highlights)
 *
 * rebuilds paragraphEl's children from `text` and the highlights so that
 * `paragraphEl.textContent === text` always holds: only text nodes and `<mark>` elements
 * are created, all text is set as text (never parsed as HTML), and nothing else
 * (labels, badges, whitespace) is inserted.
 *
 * A highlight is `{id, start, end, color, className?, title?, dataset?}`; start/end are
 * code-point offsets into `text` (Python indexing), converted to UTF-16 by lib/anchoring.
 * The text is cut into segments at every highlight boundary, so overlapping highlights
 * all stay visible: each segment is one
 * `<mark class="hl ...">` carrying every highlight that covers it:
 *   - `data-hl-ids`: the covering highlights' ids, space-separated (outermost first);
 *   - `dataset` entries of the covering highlights (values of one key joined by spaces);
 *   - `title`: the covering highlights' titles, one per line;
 *   - CSS custom properties: `--hl-color` (background: the innermost highlight's colour),
 *     `--hl-stripes` (box-shadows: one underline stripe in its own colour per further
 *     highlight, and a bar in a darker shade of its colour where a highlight starts or
 *     ends) and `--hl-depth` (the stripes' height, for padding);
 *   - classes: `hl`, every highlight's className, `hl--start`/`hl--end` where a highlight
 *     begins/ends in this segment, `hl--overlap` when more than one highlight covers it.
 *
 * @module lib/highlight
 */

import { utf16Offsets } from './anchoring.mjs';
import { element } from './dom.mjs';

/**
 * @typedef {object} Highlight
 * @property {string} id unique among the paragraph's highlights
 * @property {number} start code-point offset (inclusive)
 * @property {number} end code-point offset (exclusive)
 * @property {string} color any CSS colour
 * @property {string} [className] extra classes, space-separated
 * @property {string} [title] hover text
 * @property {Record<string, string>} [dataset] copied to the segment's data-* attributes
 */

const STRIPE = 3; // px per underline stripe of an overlapping highlight (+1 px edge)
const BAR = 2; // px of the bar that marks where a highlight starts or ends
const EDGE = 'var(--hl-edge)'; // base.css

/**
 * Rebuild the paragraph's children: plain text plus one mark per highlighted segment.
 * @param {HTMLElement} paragraphEl
 * @param {string} text the stored paragraph text
 * @param {Highlight[]} highlights
 * @returns {void}
 */
export function renderParagraph(paragraphEl, text, highlights) {
  const doc = paragraphEl.ownerDocument;
  if (!highlights.length) {
    paragraphEl.replaceChildren(doc.createTextNode(text));
    return;
  }
  const length = text.length; // an upper bound of the code-point length
  const valid = highlights
    .map((h) => ({ ...h, start: Math.max(0, h.start), end: Math.min(h.end, length) }))
    .filter((h) => h.start < h.end);
  const points = [...new Set([0, ...valid.flatMap((h) => [h.start, h.end])])].sort((a, b) => a - b);
  const units = utf16Offsets(text, points);
  const fragment = doc.createDocumentFragment();
  let position = 0; // UTF-16
  for (let i = 0; i < points.length; i += 1) {
    const from = points[i];
    const to = i + 1 < points.length ? points[i + 1] : Infinity;
    const fromUnits = units.get(from) ?? length;
    const toUnits = to === Infinity ? length : (units.get(to) ?? length);
    if (fromUnits > position) {
      fragment.append(doc.createTextNode(text.slice(position, fromUnits)));
    }
    if (toUnits <= fromUnits) continue;
    const covering = valid.filter((h) => h.start <= from && h.end >= to);
    const segment = text.slice(fromUnits, toUnits);
    fragment.append(
      covering.length ? segmentElement(segment, covering, from, to) : doc.createTextNode(segment),
    );
    position = toUnits;
  }
  if (position < length) fragment.append(doc.createTextNode(text.slice(position)));
  paragraphEl.replaceChildren(fragment);
}

/**
 * One highlighted segment.
 * @param {string} segment
 * @param {Highlight[]} covering
 * @param {number} from
 * @param {number} to
 * @returns {HTMLElement}
 */
function segmentElement(segment, covering, from, to) {
  // Outermost (longest) first, so the innermost colour is the background.
  const layers = [...covering].sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const mark = element('mark', 'hl', segment);
  /** @type {Record<string, Set<string>>} */
  const data = {};
  const titles = [];
  for (const h of layers) {
    if (h.className) mark.classList.add(...h.className.split(/\s+/).filter(Boolean));
    if (h.start === from) mark.classList.add('hl--start');
    if (h.end === to) mark.classList.add('hl--end');
    if (h.title && !titles.includes(h.title)) titles.push(h.title);
    for (const [key, value] of Object.entries(h.dataset ?? {})) {
      (data[key] ??= new Set()).add(String(value));
    }
  }
  mark.dataset.hlIds = layers.map((h) => h.id).join(' ');
  for (const [key, values] of Object.entries(data)) mark.dataset[key] = [...values].join(' ');
  if (titles.length) mark.title = titles.join('\n');
  const inner = layers[layers.length - 1];
  mark.style.setProperty('--hl-color', inner.color);
  if (layers.length > 1) mark.classList.add('hl--overlap');
  const shadows = stripes(layers, from, to);
  if (shadows.length) mark.style.setProperty('--hl-stripes', shadows.join(', '));
  if (layers.length > 1) mark.style.setProperty('--hl-depth', `${(layers.length - 1) * (STRIPE + 1)}px`);
  return mark;
}

/**
 * The box-shadows that show every layer of a segment in its own colour: a bar where a
 * highlight starts or ends (its boundary), and one underline stripe per layer but the
 * innermost (whose colour is the background), outermost at the bottom, each edged with a
 * thin dark line so that two layers of the same colour stay two. Earlier shadows paint
 * over later ones, so each stripe shows only above the ones below it.
 * @param {Highlight[]} layers outermost first
 * @param {number} from the segment's start (code points)
 * @param {number} to the segment's end
 * @returns {string[]}
 */
function stripes(layers, from, to) {
  const shadows = [];
  const starting = layers.find((h) => h.start === from);
  const ending = layers.find((h) => h.end === to);
  if (starting) shadows.push(`inset ${BAR}px 0 0 0 ${edge(starting.color)}`);
  if (ending) shadows.push(`inset -${BAR}px 0 0 0 ${edge(ending.color)}`);
  layers.slice(0, -1).forEach((h, i) => {
    const top = (i + 1) * (STRIPE + 1);
    shadows.push(`inset 0 -${top - 1}px 0 0 ${h.color}`, `inset 0 -${top}px 0 0 ${EDGE}`);
  });
  return shadows;
}

/**
 * A darker shade of a category colour, same hue: visible as a line on white and on the
 * light category colours (mixed with base.css's --hl-shade).
 * @param {string} color
 * @returns {string}
 */
function edge(color) {
  return `color-mix(in oklab, ${color} 55%, var(--hl-shade))`;
}
