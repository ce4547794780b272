/**
 * JSON requests to the app's API and the errors they end in: the one place that calls
 * fetch. Every page (annotator, validator, adjudication) and lib/sync-queue go through it.
 *
 * @module lib/http
 */

import { t } from './i18n.mjs';

/** An error answered by the API (`{"error": {"code", "message", "details"}}`) or the network. */
export class ApiError extends Error {
  /**
   * @param {string} message
   * @param {{status?: number, code?: string, details?: unknown}} [info]
   */
  constructor(message, { status = 0, code = 'network_error', details = null } = {}) {
    super(message);
    this.name = 'ApiError';
    /** HTTP status; 0 when the request never got an answer. */
    this.status = status;
    this.code = code;
    this.details = details;
  }

  /** True when the request never got an answer (offline, connection lost). */
  get offline() {
    return this.status === 0;
  }

  /**
   * True when sending the same request again later may succeed: no answer, a timeout,
   * rate limiting, a server error, or a refused CSRF token (a reload brings a fresh one,
   * and the queued change must survive until then).
   */
  get retryable() {
    return isRetryableStatus(this.status);
  }
}

/**
 * Whether an answer with this HTTP status (0: none) may succeed if sent again later.
 * @param {number} status
 * @returns {boolean}
 */
export function isRetryableStatus(status) {
  return [0, 401, 403, 408, 429].includes(status) || status >= 500;
}

/**
 * The error any thrown value stands for (an ApiError as it is; anything else, wrapped).
 * @param {unknown} error
 * @returns {ApiError}
 */
export function asApiError(error) {
  return error instanceof ApiError ? error : new ApiError(String(error));
}

/**
 * The page's CSRF token (templates/base.html's `<meta name="csrf-token">`), '' if none.
 * @returns {string}
 */
export function pageCsrfToken() {
  return document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
}

/**
 * Send a JSON request; resolve with the parsed body (null for 204), reject with ApiError.
 * @param {string} url
 * @param {{method?: string, body?: unknown, csrfToken?: string, signal?: AbortSignal}} [options]
 * @returns {Promise<any>}
 */
export async function requestJson(url, { method = 'GET', body, csrfToken, signal } = {}) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (csrfToken) headers['X-CSRFToken'] = csrfToken;
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
      signal,
    });
  } catch (error) {
    throw new ApiError(t('You seem to be offline.'), { details: String(error) });
  }
  if (response.status === 204) return null;
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const envelope = payload && typeof payload === 'object' ? payload.error : null;
    throw new ApiError(envelope?.message || t('The server answered {status}.', { status: response.status }), {
      status: response.status,
      code: envelope?.code || `http_${response.status}`,
      details: envelope?.details ?? null,
    });
  }
  return payload;
}
