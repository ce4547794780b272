/**
 * The words of the save-status region (`role="status"`).
 *
 * @module annotator/status
 */

import { t } from '../lib/i18n.mjs';

/**
 * @param {{message: string, failure: string | null, pending: number, offline: boolean,
 *   sending: boolean, lastError: string | null, anythingSaved: boolean}} state
 *   message: a navigation message that takes precedence ('' for none);
 *   failure: a change the server refused for good; lastError: a retryable error.
 * @returns {string}
 */
export function statusText({ message, failure, pending, offline, sending, lastError, anythingSaved }) {
  if (message) return message;
  const waiting = pending === 1 ? t('{count} change waiting', { count: pending }) : t('{count} changes waiting', { count: pending });
  if (failure) return t('Could not save: {error}', { error: failure });
  if (pending && offline) return t('Offline — {waiting}', { waiting });
  if (pending && lastError && !sending) return t('Could not save: {error} Retrying — {waiting}', { error: lastError, waiting });
  if (pending) return t('Saving…');
  return anythingSaved ? t('Saved') : '';
}

/**
 * The status words for an annotation store (annotator/store) and its queue.
 * @param {{failure: string | null, pending: number, annotations: Map<string, unknown>,
 *   queue: {offline: boolean, inFlight?: unknown, lastError?: {message: string},
 *   everAcknowledged: boolean} | null}} store
 * @param {string} message a navigation message ('' for none)
 * @returns {string}
 */
export function storeStatusText(store, message) {
  const { queue } = store;
  return statusText({
    message,
    failure: store.failure,
    pending: store.pending,
    offline: Boolean(queue?.offline),
    sending: Boolean(queue?.inFlight),
    lastError: queue?.lastError?.message ?? null,
    anythingSaved: Boolean(queue && (queue.everAcknowledged || store.annotations.size)),
  });
}

/**
 * Whether a status text reports a problem (styled as an error).
 * @param {string} text
 * @returns {boolean}
 */
export function isProblem(text) {
  return /^(Could not|Offline|You seem)/.test(text);
}
