/**
 * The "Thank you" panel after Submit: the completion code and the way back to the crowd
 * platform (a Prolific link, or MTurk's externalSubmit form).
 *
 * @module annotator/completion
 */

import { mturkForm } from '../lib/mturk.mjs';

/**
 * Fill the completion panel (built with DOM calls: the code and URL are data).
 * @param {HTMLElement} $panel the `.js-completion` section
 * @param {{completion_code: string, redirect_url?: string | null}} completion
 * @param {{submit_to: string, assignment_id: string} | null | undefined} mturk
 */
export function completionContent($panel, completion, mturk) {
  const $code = /** @type {HTMLElement} */ ($panel.querySelector('.js-completion-code'));
  const $next = /** @type {HTMLElement} */ ($panel.querySelector('.js-completion-next'));
  $code.textContent = completion.completion_code;
  $next.replaceChildren();
  if (mturk?.submit_to && mturk.assignment_id) {
    $next.append(mturkForm(mturk, completion.completion_code));
  } else if (completion.redirect_url && isPlatformUrl(completion.redirect_url)) {
    const $link = document.createElement('a');
    $link.className = 'button button--primary';
    $link.href = completion.redirect_url;
    $link.target = '_top'; // leave the platform's iframe, if any
    $link.textContent = 'Return to the study platform to finish';
    $next.append($link);
  } else {
    $next.textContent = 'Keep this code: you may need it to be paid. You can close this page.';
  }
}

/**
 * An http(s) address other than the app's own completion page (which shows this same code).
 * @param {string} url
 * @returns {boolean}
 */
function isPlatformUrl(url) {
  return isHttpUrl(url) && !isOwnCompletionPage(url);
}

/**
 * @param {string} url
 * @returns {boolean}
 */
function isHttpUrl(url) {
  try {
    const parsed = new URL(url, window.location.href);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * The app's own completion page shows the same code: no need to send the worker there.
 * @param {string} url
 * @returns {boolean}
 */
function isOwnCompletionPage(url) {
  const parsed = new URL(url, window.location.href);
  return parsed.origin === window.location.origin && parsed.pathname.startsWith('/s/');
}
