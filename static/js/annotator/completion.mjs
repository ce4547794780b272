/**
 * The "Thank you" panel after Submit: the completion code and the way back to the crowd
 * platform (a Prolific link, or MTurk's externalSubmit form).
 *
 * @module annotator/completion
 */

import { element } from '../lib/dom.mjs';
import { followSoon } from '../lib/follow.mjs';
import { requestJson } from '../lib/http.mjs';
import { isMturkAssignment, mturkForm } from '../lib/mturk.mjs';
import { t } from '../lib/i18n.mjs';

/** Worker-visible text. */
const TEXT = {
  nextStep: t('Continue to the last questions'),
};

/**
 * Submit the session (POST /api/sessions/<token>/submit); resolves with its completion.
 * @param {string} url
 * @param {string} csrfToken
 * @returns {Promise<import('./wire.mjs').Completion>}
 */
export function requestCompletion(url, csrfToken) {
  return requestJson(url, { method: 'POST', body: {}, csrfToken });
}

/**
 * @typedef {{completion_code: string, redirect_url?: string | null, outcome?: string | null,
 *   shown_code?: string | null}} CompletionAnswer
 *   shown_code: the code the worker sees (the outcome's platform code, the session's own
 *   where the study has none); null where the Return link alone completes or a study step
 *   (the after-survey) comes first
 */

/**
 * Fill the completion panel (built with DOM calls: the code and URL are data). With
 * `follow` (a Submit just now, not a reload of a submitted task), a worker with a
 * platform link is sent there after a moment (lib/follow): Prolific reads the outcome's
 * completion code from that address.
 * @param {HTMLElement} $panel the `.js-completion` section
 * @param {CompletionAnswer} completion
 * @param {{submit_to: string, assignment_id: string} | null | undefined} mturk
 * @param {{follow?: boolean}} [options]
 * @returns {number | null} the pending follow's timer id, if any
 */
export function completionContent($panel, completion, mturk, { follow = false } = {}) {
  const $code = /** @type {HTMLElement} */ ($panel.querySelector('.js-completion-code'));
  const $codeRow = /** @type {HTMLElement} */ ($panel.querySelector('.js-completion-code-row') ?? $code);
  const $next = /** @type {HTMLElement} */ ($panel.querySelector('.js-completion-next'));
  const shown = completion.shown_code ?? null;
  $code.textContent = shown ?? '';
  $codeRow.hidden = !shown;
  $next.replaceChildren();
  if (completion.redirect_url && isOwnStepPage(completion.redirect_url)) {
    // A study step comes before the end (the after-survey): it sends the worker on.
    const $link = element('a', 'button button--primary', TEXT.nextStep);
    $link.href = completion.redirect_url;
    $next.append($link);
    if (follow) return followSoon($link);
  } else if (isMturkAssignment(mturk)) {
    $next.append(mturkForm(mturk, completion.completion_code, completion.outcome ?? 'completed'));
  } else if (completion.redirect_url && isPlatformUrl(completion.redirect_url)) {
    const $link = element('a', 'button button--primary', t('Return to the study'));
    $link.href = completion.redirect_url;
    $link.target = '_top'; // leave the platform's iframe, if any
    $next.append($link);
    if (follow) return followSoon($link);
  } else {
    $next.textContent = t('Keep this code: you may need it to be paid. You can close this page.');
  }
  return null;
}

/**
 * Show the completion panel; after a Submit just now (`fresh`), move the focus and the
 * view to it and follow a platform link.
 * @param {HTMLElement} $panel
 * @param {CompletionAnswer} completion
 * @param {{submit_to: string, assignment_id: string} | null | undefined} mturk
 * @param {boolean} fresh
 */
export function showCompletion($panel, completion, mturk, fresh) {
  completionContent($panel, completion, mturk, { follow: fresh });
  $panel.hidden = false;
  if (!fresh) return;
  const $heading = /** @type {HTMLElement} */ ($panel.querySelector('h2'));
  $heading.tabIndex = -1;
  $heading.focus();
  $panel.scrollIntoView({ block: 'start' });
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
 * A page of the app's study steps for this session (`/s/<token>/survey/after`): the
 * study goes on there before it ends.
 * @param {string} url
 * @returns {boolean}
 */
function isOwnStepPage(url) {
  if (!isHttpUrl(url)) return false;
  const parsed = new URL(url, window.location.href);
  return parsed.origin === window.location.origin && /^\/s\/[^/]+\/survey\//.test(parsed.pathname);
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
