/**
 * Submitting an MTurk ExternalQuestion HIT: the page posts the assignment back to MTurk's
 * documented externalSubmit endpoint. The only module that knows MTurk: the annotator's
 * and the validator's completion panels build the form here, and the completion page
 * (complete/complete.mjs) sends the one the server rendered through here.
 *
 * @module lib/mturk
 */

import { button, element } from './dom.mjs';
import { t } from './i18n.mjs';

/**
 * Whether a page's `mturk` settings name an assignment to submit to MTurk.
 * @param {{submit_to?: string, assignment_id?: string} | null | undefined} mturk
 * @returns {mturk is {submit_to: string, assignment_id: string}}
 */
export function isMturkAssignment(mturk) {
  return Boolean(mturk?.submit_to && mturk.assignment_id);
}

/**
 * Send at once the externalSubmit form the server rendered under `$root`
 * (`form.js-mturk-form`, templates/annotate/complete.html), so that the assignment is
 * completed without another click.
 * @param {ParentNode} $root
 * @returns {boolean} whether there was one
 */
export function submitRenderedForm($root) {
  const $form = /** @type {HTMLFormElement | null} */ ($root.querySelector('form.js-mturk-form'));
  $form?.requestSubmit();
  return Boolean($form);
}

/**
 * A form that posts the assignment, the completion code and the outcome (completed,
 * failed_checks, ...: requesters approve or reject by it) to MTurk (built with DOM calls:
 * every value is data).
 * @param {{submit_to: string, assignment_id: string}} mturk
 * @param {string} code
 * @param {string} [outcome] how the worker's part ended; a finished task is `completed`
 * @returns {HTMLFormElement}
 */
export function mturkForm(mturk, code, outcome = 'completed') {
  const $form = element('form');
  $form.method = 'post';
  const base = mturk.submit_to.replace(/\/+$/, '');
  $form.action = base.endsWith('/mturk/externalSubmit') ? base : `${base}/mturk/externalSubmit`;
  $form.target = '_top';
  // The page's own root may handle every submit inside it (the annotator's Add form
  // does, and cancels it): this post is MTurk's, so it must not reach that handler.
  $form.addEventListener('submit', (event) => event.stopPropagation());
  for (const [name, value] of [
    ['assignmentId', mturk.assignment_id],
    ['completion_code', code],
    ['outcome', outcome],
  ]) {
    const $input = element('input');
    $input.type = 'hidden';
    $input.name = name;
    $input.value = value;
    $form.append($input);
  }
  $form.append(button(t('Send your work to MTurk'), 'button button--primary', { type: 'submit' }));
  return $form;
}
