/**
 * Submitting an MTurk ExternalQuestion HIT: the page posts the assignment back to MTurk's
 * documented externalSubmit endpoint (used by the annotator's and the validator's
 * completion panels).
 *
 * @module lib/mturk
 */

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
  const $form = document.createElement('form');
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
    const $input = document.createElement('input');
    $input.type = 'hidden';
    $input.name = name;
    $input.value = value;
    $form.append($input);
  }
  const $button = document.createElement('button');
  $button.type = 'submit';
  $button.className = 'button button--primary';
  $button.textContent = 'Send your work to MTurk';
  $form.append($button);
  return $form;
}
