/**
 * The annotator page's listeners: every DOM event the page handles, turned into a call
 * of the Annotator (or one of its parts). One listener per event type on the root (or the
 * document/window where the event may start outside it), all removed by one
 * AbortController's signal.
 *
 * A new button is one row of BUTTONS; a new key, one case of keyboard.mjs's pageKeyAction.
 *
 * @module annotator/events
 */

import { isTextField, pageKeyAction } from './keyboard.mjs';
import { DocumentView } from './view.mjs';

/** @typedef {import('./annotator.mjs').default} Annotator */

/**
 * The page's buttons: a `.js-*` class and what a click on it does (rowId: the annotation
 * of the table row the button is in).
 * @type {[string, (page: Annotator, $button: HTMLButtonElement, rowId: string | undefined) => unknown][]}
 */
export const BUTTONS = [
  ['.js-category', (page, $button) => page.steps.choose($button.dataset.category ?? '')],
  ['.js-severity', (page, $button) => page.steps.chooseSeverity($button.dataset.severity ?? '')],
  ['.js-clear', (page) => page.steps.clear()],
  ['.js-previous', (page) => page.goTo(page.position - 1)],
  ['.js-next', (page) => page.goTo(page.position + 1)],
  ['.js-submit', (page) => page.askToSubmit()],
  ['.js-submit-confirm', (page) => page.submit()],
  ['.js-submit-cancel', (page) => page.question.close({ focus: true })],
  ['.js-toggle-instructions', (page) => page.instructions.toggle()],
  ['.js-show', (page, _, rowId) => rowId && page.showInText(rowId)],
  ['.js-remove', (page, _, rowId) => rowId && page.table.askToConfirm(rowId)],
  ['.js-remove-confirm', (page, _, rowId) => rowId && page.removeAnnotation(rowId)],
  ['.js-remove-cancel', (page, _, rowId) => rowId && page.table.cancelConfirm(rowId)],
];

/**
 * Add every listener of the page; aborting `signal` removes them all.
 * @param {Annotator} page
 * @param {AbortSignal} signal
 */
export function bindEvents(page, signal) {
  const { $root } = page;
  const options = { signal };
  $root.addEventListener('click', (event) => handleClick(page, event), options);
  $root.addEventListener(
    'submit',
    (event) => {
      event.preventDefault();
      page.addAnnotation();
    },
    options,
  );
  $root.addEventListener('input', () => page.steps.commentChanged(), options);
  $root.addEventListener('focusin', (event) => handleFocus(page, event), options);
  $root.addEventListener('mouseover', (event) => DocumentView.linkHovered($root, event), options);
  $root.addEventListener('mouseout', (event) => DocumentView.linkHovered($root, event), options);
  // Selections may end outside the root (a drag past the page edge); keys go to the body.
  // The selection is final at mouseup: read it at once, before a following key press or
  // focus change (e.g. into the comment field) can replace it.
  document.addEventListener('mouseup', () => captureSelection(page), options);
  document.addEventListener(
    'keyup',
    (event) => {
      if (event.shiftKey && !isTextField(event.target)) captureSelection(page);
    },
    options,
  );
  document.addEventListener('keydown', (event) => handleKey(page, event), options);
  window.addEventListener(
    'beforeunload',
    (event) => {
      if (page.store.pending > 0) {
        event.preventDefault();
        event.returnValue = '';
      }
    },
    options,
  );
  // A "you seem to be offline" message is stale once the connection is back.
  window.addEventListener('online', () => page.setStatus(''), options);
  page.store.addEventListener('change', () => page.renderStatus(), options);
  page.store.addEventListener(
    'rejected',
    (event) => page.afterRejected(/** @type {CustomEvent} */ (event).detail),
    options,
  );
}

/**
 * @param {Annotator} page
 * @param {MouseEvent} event
 */
function handleClick(page, event) {
  const $button = /** @type {HTMLButtonElement | null} */ (/** @type {HTMLElement} */ (event.target).closest('button'));
  if (!$button || $button.disabled) return;
  const rowId = /** @type {HTMLElement | null} */ ($button.closest('.js-annotation-row'))?.dataset.annotation;
  BUTTONS.find(([selector]) => $button.matches(selector))?.[1](page, $button, rowId);
}

/**
 * @param {Annotator} page
 * @param {FocusEvent} event
 */
function handleFocus(page, event) {
  const $target = /** @type {HTMLElement} */ (event.target);
  if ($target.matches('.js-span')) page.steps.setTarget('span');
  if ($target.matches('.js-paired-span')) page.steps.setTarget('paired');
  // A row reached by keyboard lights up its spans, as hovering it does.
  const rowId = /** @type {HTMLElement | null} */ ($target.closest('.js-annotation-row'))?.dataset.annotation;
  DocumentView.link(page.$root, rowId ? [rowId] : []);
}

/**
 * @param {Annotator} page
 * @param {KeyboardEvent} event
 */
function handleKey(page, event) {
  const asked = pageKeyAction(event, {
    shortcuts: page.shortcuts,
    complete: page.steps.isComplete(),
    asking: page.question.open,
  });
  if (!asked) {
    // Not a key of the page's rules: maybe a severity's (taxonomies with severities).
    const severity = page.steps.severity?.keyFor(event);
    if (severity && chooseSeverity(page, severity, event.target)) event.preventDefault();
    return;
  }
  if (asked.action === 'add') {
    event.preventDefault();
    page.addAnnotation();
  } else if (asked.action === 'cancel-remove') page.table.cancelConfirm(asked.row);
  else if (asked.action === 'cancel-submit') page.question.close({ focus: true });
  else if (asked.action === 'clear') {
    page.steps.clear();
    page.suggestions.cancelEdit();
  }
  else if (asked.action === 'choose' && page.steps.choose(asked.category)) event.preventDefault();
}

/**
 * A severity's key goes to what the worker is filling: the form when it has a category
 * (its severity step is asked) and the focus is not in the suggestions; else an open
 * Accept's question (Accept puts the focus there), then the form.
 * @param {Annotator} page
 * @param {string} severity
 * @param {EventTarget | null} target
 * @returns {boolean} whether a severity was chosen
 */
function chooseSeverity(page, severity, target) {
  const inSuggestions = target instanceof Element && Boolean(target.closest('.js-suggestions'));
  if (!inSuggestions && page.steps.category !== null) return page.steps.chooseSeverity(severity);
  return page.suggestions.chooseAskedSeverity(severity) || page.steps.chooseSeverity(severity);
}

/**
 * Read the browser's selection into step 1 or step 3.
 * @param {Annotator} page
 */
function captureSelection(page) {
  if (page.readOnly) return;
  const selection = window.getSelection();
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
  const range = selection.getRangeAt(0);
  if (!range.intersectsNode(page.$root)) return;
  // Drop the browser's selection either way: the chosen span stays drawn by Steps, and a
  // refused one must not be dragged by the next mouse press.
  if (page.takeRange(range)) selection.removeAllRanges();
}
