/**
 * JSON client and a persistent retry queue for the worker API.
 *
 * Every change a worker makes (add, remove, move to a paragraph) is written to
 * localStorage BEFORE it is sent and removed only when the server has answered for good,
 * so a reload, a lost connection or a server restart loses nothing.
 *
 * @module lib/api
 */

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

  /**
   * True when sending the same request again later may succeed: no answer, a timeout,
   * rate limiting, a server error, or a refused CSRF token (a reload brings a fresh one,
   * and the queued change must survive until then).
   */
  get retryable() {
    return [0, 401, 403, 408, 429].includes(this.status) || this.status >= 500;
  }
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
    throw new ApiError('You seem to be offline.', { details: String(error) });
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
    throw new ApiError(envelope?.message || `The server answered ${response.status}.`, {
      status: response.status,
      code: envelope?.code || `http_${response.status}`,
      details: envelope?.details ?? null,
    });
  }
  return payload;
}

/**
 * @typedef {object} Operation
 * @property {string} key unique key of this operation
 * @property {'add' | 'remove' | 'position'} kind
 * @property {string} [id] the annotation's client UUID (add/remove)
 * @property {string} method
 * @property {string} url
 * @property {unknown} [body]
 */

/**
 * A FIFO of writes, persisted per session in localStorage, sent one at a time (so the
 * changes of one annotation always reach the server in order) and retried with
 * exponential backoff on network errors, 5xx and 429.
 *
 * Events (on the queue, an EventTarget): `change` (detail: {pending, offline}),
 * `acknowledged` (detail: {operation, result}), `rejected` (detail: {operation, error}).
 */
export class SyncQueue extends EventTarget {
  /**
   * @param {{storageKey: string, csrfToken: string, storage?: Storage | null, maxDelay?: number}} options
   */
  constructor({ storageKey, csrfToken, storage = safeLocalStorage(), maxDelay = 30000 }) {
    super();
    this.storageKey = storageKey;
    this.csrfToken = csrfToken;
    this.storage = storage;
    this.maxDelay = maxDelay;
    /** @type {Operation[]} */
    this.operations = this.load();
    this.sending = false;
    this.offline = false;
    this.attempt = 0;
    this.everAcknowledged = false;
    /** @type {ApiError | undefined} */
    this.lastError = undefined;
    /** @type {Operation | undefined} */
    this.inFlight = undefined;
    /** @type {number | undefined} */
    this.timer = undefined;
    this.onOnline = () => this.flush(true);
    window.addEventListener('online', this.onOnline);
  }

  /** @returns {Operation[]} */
  load() {
    try {
      const raw = this.storage?.getItem(this.storageKey);
      const parsed = raw ? JSON.parse(raw) : [];
      return Array.isArray(parsed) ? parsed : [];
    } catch {
      return [];
    }
  }

  save() {
    try {
      if (this.operations.length) this.storage?.setItem(this.storageKey, JSON.stringify(this.operations));
      else this.storage?.removeItem(this.storageKey);
    } catch {
      // Storage full or blocked (some third-party iframes): the in-memory queue still works.
    }
  }

  /** Number of changes not yet acknowledged by the server. */
  get pending() {
    return this.operations.length;
  }

  /**
   * Queue a write (persisted at once) and start sending.
   * @param {Omit<Operation, 'key'>} operation
   */
  enqueue(operation) {
    if (operation.kind === 'position') {
      // Only the latest position matters.
      this.operations = this.operations.filter((op) => op.kind !== 'position' || op === this.inFlight);
    }
    this.operations.push({ ...operation, key: `${Date.now()}-${Math.random().toString(36).slice(2)}` });
    this.save();
    this.emitChange();
    this.flush();
  }

  /** Drop queued position updates (e.g. a direct move supersedes them). */
  dropPositions() {
    this.operations = this.operations.filter((op) => op.kind !== 'position' || op === this.inFlight);
    this.save();
    this.emitChange();
  }

  /**
   * Send queued operations, one at a time, until the queue is empty or a retryable error.
   * @param {boolean} [now] retry at once, ignoring the current backoff
   */
  async flush(now = false) {
    if (now) {
      window.clearTimeout(this.timer);
      this.timer = undefined;
      this.attempt = 0;
    }
    if (this.sending || this.timer !== undefined) return;
    this.sending = true;
    try {
      while (this.operations.length) {
        const operation = this.operations[0];
        this.inFlight = operation;
        this.emitChange();
        try {
          const result = await requestJson(operation.url, {
            method: operation.method,
            body: operation.body,
            csrfToken: this.csrfToken,
          });
          this.finish(operation);
          this.offline = false;
          this.lastError = undefined;
          this.everAcknowledged = true;
          this.attempt = 0;
          this.dispatchEvent(new CustomEvent('acknowledged', { detail: { operation, result } }));
        } catch (error) {
          const apiError = error instanceof ApiError ? error : new ApiError(String(error));
          if (apiError.retryable) {
            this.offline = apiError.status === 0;
            this.lastError = apiError;
            this.scheduleRetry();
            return;
          }
          this.finish(operation);
          this.dispatchEvent(new CustomEvent('rejected', { detail: { operation, error: apiError } }));
        }
      }
    } finally {
      this.inFlight = undefined;
      this.sending = false;
      this.emitChange();
    }
  }

  /** @param {Operation} operation */
  finish(operation) {
    this.operations = this.operations.filter((op) => op.key !== operation.key);
    this.save();
  }

  scheduleRetry() {
    const delay = Math.min(this.maxDelay, 1000 * 2 ** this.attempt) * (0.8 + Math.random() * 0.4);
    this.attempt += 1;
    this.timer = window.setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, delay);
  }

  emitChange() {
    this.dispatchEvent(
      new CustomEvent('change', {
        detail: { pending: this.pending, offline: this.offline, sending: Boolean(this.inFlight) },
      }),
    );
  }

  /** Stop timers and listeners (the persisted queue stays for the next page load). */
  destroy() {
    window.clearTimeout(this.timer);
    window.removeEventListener('online', this.onOnline);
  }
}

/**
 * Take out of storage the writes a queue left there, without sending them: for a session
 * that can no longer change (submitted, maybe in another tab, before they were sent), so
 * that the page can say what could not be saved instead of keeping them forever.
 * @param {string} storageKey
 * @param {Storage | null} [storage]
 * @returns {Operation[]}
 */
export function takeStoredOperations(storageKey, storage = safeLocalStorage()) {
  try {
    const raw = storage?.getItem(storageKey);
    storage?.removeItem(storageKey);
    const parsed = raw ? JSON.parse(raw) : [];
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** @returns {Storage | null} */
function safeLocalStorage() {
  try {
    const storage = window.localStorage;
    const probe = '__falte_probe__';
    storage.setItem(probe, probe);
    storage.removeItem(probe);
    return storage;
  } catch {
    return null;
  }
}
