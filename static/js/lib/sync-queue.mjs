/**
 * A persistent retry queue of JSON writes, with no knowledge of what they mean.
 *
 * Every write is put in localStorage BEFORE it is sent and taken out only when the server
 * has answered for good (a success, or a refusal that sending again cannot change), so a
 * reload, a lost connection or a server restart loses nothing. Writes go one at a time,
 * in order; a retryable failure (lib/http's ApiError.retryable: no answer, 401, 403, 408,
 * 429, 5xx) waits an exponential backoff and tries again.
 *
 * Callers give their own rules as data: `coalesce`, a key shared by writes of which only
 * the latest matters (a queued one is replaced by the next); any other field of an
 * operation (`kind`, `id`...) is the caller's, kept and handed back untouched.
 *
 * Used by the annotator (annotator/store), the validator and the adjudication page.
 *
 * @module lib/sync-queue
 */

import { asApiError, requestJson } from './http.mjs';

/**
 * @typedef {object} Operation
 * @property {string} key unique key of this operation (set by the queue)
 * @property {string} method
 * @property {string} url
 * @property {unknown} [body]
 * @property {string} [coalesce] writes sharing this key: only the latest is sent
 * @property {string} [kind] the caller's own label, kept as is
 * @property {string} [id] the caller's own id, kept as is
 */

/**
 * The wait before retry number `attempt` (0 for the first): doubling from `baseMs`, at
 * most `maxMs`, spread ±20% by `jitter` (0..1) so that many clients do not retry together.
 * @param {number} attempt
 * @param {{baseMs?: number, maxMs?: number, jitter?: number}} [options]
 * @returns {number} milliseconds
 */
export function backoffDelay(attempt, { baseMs = 1000, maxMs = 30000, jitter = Math.random() } = {}) {
  return Math.min(maxMs, baseMs * 2 ** attempt) * (0.8 + jitter * 0.4);
}

/**
 * The queue with `operation` appended: a queued write with the same `coalesce` key is
 * dropped first, unless it is in flight (its request is already on its way).
 * @param {Operation[]} operations
 * @param {Operation} operation
 * @param {Operation} [inFlight]
 * @returns {Operation[]}
 */
export function appendCoalesced(operations, operation, inFlight) {
  const kept = operation.coalesce ? withoutCoalesced(operations, operation.coalesce, inFlight) : operations;
  return [...kept, operation];
}

/**
 * The queue without the writes queued under a `coalesce` key (bar the one in flight).
 * @param {Operation[]} operations
 * @param {string} coalesce
 * @param {Operation} [inFlight]
 * @returns {Operation[]}
 */
export function withoutCoalesced(operations, coalesce, inFlight) {
  return operations.filter((op) => op.coalesce !== coalesce || op === inFlight);
}

/**
 * A FIFO of writes, persisted in localStorage under `storageKey`, sent one at a time.
 *
 * Events (on the queue, an EventTarget): `change` (detail: {pending, offline, sending}),
 * `acknowledged` (detail: {operation, result}), `rejected` (detail: {operation, error}).
 */
export class SyncQueue extends EventTarget {
  /**
   * @param {{storageKey: string, csrfToken: string, storage?: Storage | null,
   *   baseDelay?: number, maxDelay?: number}} options
   */
  constructor({ storageKey, csrfToken, storage = safeLocalStorage(), baseDelay = 1000, maxDelay = 30000 }) {
    super();
    this.storageKey = storageKey;
    this.csrfToken = csrfToken;
    this.storage = storage;
    this.baseDelay = baseDelay;
    this.maxDelay = maxDelay;
    /** @type {Operation[]} */
    this.operations = readStored(storageKey, storage);
    this.sending = false;
    this.offline = false;
    this.attempt = 0;
    this.everAcknowledged = false;
    /** @type {import('./http.mjs').ApiError | undefined} */
    this.lastError = undefined;
    /** @type {Operation | undefined} */
    this.inFlight = undefined;
    /** @type {number | undefined} */
    this.timer = undefined;
    this.listeners = new AbortController();
    window.addEventListener('online', () => this.flush(true), { signal: this.listeners.signal });
  }

  save() {
    try {
      if (this.operations.length) this.storage?.setItem(this.storageKey, JSON.stringify(this.operations));
      else this.storage?.removeItem(this.storageKey);
    } catch {
      // Storage full or blocked (some third-party iframes): the in-memory queue still works.
    }
  }

  /** Number of writes not yet answered for good by the server. */
  get pending() {
    return this.operations.length;
  }

  /**
   * Queue a write (persisted at once) and start sending.
   * @param {Omit<Operation, 'key'>} operation
   */
  enqueue(operation) {
    const key = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    this.operations = appendCoalesced(this.operations, { ...operation, key }, this.inFlight);
    this.save();
    this.emitChange();
    this.flush();
  }

  /**
   * Drop the queued writes of a `coalesce` key (e.g. one sent directly supersedes them).
   * @param {string} coalesce
   */
  drop(coalesce) {
    this.operations = withoutCoalesced(this.operations, coalesce, this.inFlight);
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
          const apiError = asApiError(error);
          if (apiError.retryable) {
            this.offline = apiError.offline;
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
    const delay = backoffDelay(this.attempt, { baseMs: this.baseDelay, maxMs: this.maxDelay });
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
    this.listeners.abort();
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
  const operations = readStored(storageKey, storage);
  try {
    storage?.removeItem(storageKey);
  } catch {
    // Blocked storage: nothing was kept there either.
  }
  return operations;
}

/**
 * @param {string} storageKey
 * @param {Storage | null} storage
 * @returns {Operation[]}
 */
function readStored(storageKey, storage) {
  try {
    const raw = storage?.getItem(storageKey);
    const parsed = raw ? JSON.parse(raw) : [];
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** @returns {Storage | null} localStorage, or null where the page may not use it */
export function safeLocalStorage() {
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
