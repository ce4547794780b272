/**
 * Reading the worker's text selection as a span of one shown paragraph, with the rules of
 * the steps: the error span (step 1) comes from the Current Paragraph; the paired span
 * (step 3) from the Context or the Current Paragraph; never across two paragraphs.
 *
 * @module annotator/selection
 */

import { rangeToSpan } from '../lib/anchoring.mjs';
import { t } from '../lib/i18n.mjs';

/** @typedef {import('./wire.mjs').WireSpan} WireSpan */

export const REFUSALS = {
  twoParagraphs: t('Select text within one paragraph.'),
  notCurrent:
    t('Select the error in the Current Paragraph. Earlier paragraphs are only for the second span of a paired error.'),
  pairedAhead: t('Select the paired span in the Context or the Current Paragraph.'),
};

/**
 * What a selection means for the form: a span, a refusal to show, or nothing to do.
 * @param {Range} range the selection's range (not collapsed)
 * @param {HTMLElement[]} shown the paragraph elements on screen
 * @param {{position: number, forPaired: boolean}} rules
 * @returns {{span: WireSpan} | {refusal: string} | null}
 */
export function readSelection(range, shown, { position, forPaired }) {
  // Paragraphs the selection covers with more than whitespace; a drag that overshoots a
  // paragraph's end into the page around it is clipped to the paragraph.
  /** @type {{$p: HTMLElement, span: {start: number, end: number, text: string}}[]} */
  const touched = [];
  for (const $p of shown) {
    if (!range.intersectsNode($p)) continue;
    const span = rangeToSpan(range, $p);
    if (span) touched.push({ $p, span });
  }
  if (touched.length === 0) return null;
  if (touched.length > 1) return { refusal: REFUSALS.twoParagraphs };
  const [{ $p, span }] = touched;
  const paragraphId = Number($p.dataset.paragraph);
  if (!forPaired && paragraphId !== position) return { refusal: REFUSALS.notCurrent };
  if (forPaired && paragraphId > position) return { refusal: REFUSALS.pairedAhead };
  return { span: { paragraph_id: paragraphId, ...span } };
}
