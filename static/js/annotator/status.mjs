/**
 * The words of the save-status region (`role="status"`).
 *
 * @module annotator/status
 */

/**
 * @param {{message: string, failure: string | null, pending: number, offline: boolean,
 *   sending: boolean, lastError: string | null, anythingSaved: boolean}} state
 *   message: a navigation message that takes precedence ('' for none);
 *   failure: a change the server refused for good; lastError: a retryable error.
 * @returns {string}
 */
export function statusText({ message, failure, pending, offline, sending, lastError, anythingSaved }) {
  if (message) return message;
  const waiting = `${pending} ${pending === 1 ? 'change' : 'changes'} waiting`;
  if (failure) return `Could not save: ${failure}`;
  if (pending && offline) return `Offline — ${waiting}`;
  if (pending && lastError && !sending) return `Could not save: ${lastError} Retrying — ${waiting}`;
  if (pending) return 'Saving…';
  return anythingSaved ? 'Saved' : '';
}

/**
 * Whether a status text reports a problem (styled as an error).
 * @param {string} text
 * @returns {boolean}
 */
export function isProblem(text) {
  return /^(Could not|Offline|You seem)/.test(text);
}
