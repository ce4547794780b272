/**
 * Moving between paragraphs: which buttons are open (a pure rule, unit-tested in
 * tests/e2e/test_js_units.py) and the one request that reveals the next paragraph.
 *
 * @module annotator/navigation
 */

import { requestJson } from '../lib/http.mjs';
import { positionBody } from './wire.mjs';
import { t } from '../lib/i18n.mjs';

/** @typedef {import('./wire.mjs').PositionAnswer} PositionAnswer */

const OFFLINE_NEXT = t('You seem to be offline. Your work is kept: click again when you are back online.');
const LOADING_NEXT = t('Loading the next paragraph…');

/**
 * @typedef {object} Place
 * @property {number} position the paragraph shown as current (from 0)
 * @property {number} furthest the furthest paragraph revealed
 * @property {number} total paragraphs in the document
 * @property {boolean} busy a request the page waits for (next paragraph, submit)
 * @property {boolean} readOnly submitted, a preview or a researcher's view
 * @property {number} pending changes not yet saved
 */

/**
 * Whether Previous, Next and Submit can be pressed.
 * @param {Place} place
 * @returns {{previous: boolean, next: boolean, submit: boolean}}
 */
export function navigationState({ position, furthest, total, busy, readOnly, pending }) {
  // A read-only page moves among the revealed paragraphs; a worker may reveal one more.
  const nextReachable = readOnly ? position < furthest : position < total - 1;
  return {
    previous: !busy && position > 0,
    next: !busy && nextReachable,
    submit: !readOnly && !busy && position === total - 1 && pending === 0,
  };
}

/**
 * Whether the worker may go to `target` now, and how: `shown` (revealed already: at once),
 * `reveal` (the next one: ask the server first) or null (not from here).
 * @param {number} target
 * @param {Place & {canReveal: boolean}} place canReveal: a writable page with a position URL
 * @returns {'shown' | 'reveal' | null}
 */
export function moveKind(target, { total, furthest, busy, canReveal }) {
  if (target < 0 || target >= total || busy) return null;
  if (target <= furthest) return 'shown';
  return canReveal && target === furthest + 1 ? 'reveal' : null;
}

/**
 * Ask the server for the next paragraph (PUT position), which also records the move.
 * @param {{url: string, csrfToken: string, target: number, activeSeconds: number}} request
 * @returns {Promise<PositionAnswer>}
 */
export function revealParagraph({ url, csrfToken, target, activeSeconds }) {
  return requestJson(url, { method: 'PUT', body: positionBody(target, activeSeconds), csrfToken });
}

/**
 * What the status line says while, or after failing, to load the next paragraph.
 * @param {import('../lib/http.mjs').ApiError | Error | null} error null: still loading
 * @returns {string}
 */
export function revealMessage(error) {
  if (!error) return LOADING_NEXT;
  if ('offline' in error && error.offline) return OFFLINE_NEXT;
  return t('Could not load the next paragraph: {error}', { error: error.message });
}
