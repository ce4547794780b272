/**
 * The worker's annotations and their way to the server: every change is applied here at
 * once (optimistically) and sent through a persistent SyncQueue (lib/sync-queue.mjs); the writes' shapes are
 * annotator/wire's.
 *
 * @module annotator/store
 */

import { SyncQueue, takeStoredOperations } from '../lib/sync-queue.mjs';
import { ADD, POSITION, REMOVE, addOperation, positionBody, positionOperation, removeOperation } from './wire.mjs';

/**
 * @typedef {import('./wire.mjs').Annotation} Annotation
 * @typedef {import('./wire.mjs').WireSpan} WireSpan
 * @typedef {import('../lib/http.mjs').ApiError} ApiError
 * @typedef {import('../lib/sync-queue.mjs').Operation} Operation
 */

/**
 * Events: `change` (the queue's state changed: re-render the status), `rejected`
 * (detail: {annotation: Annotation | null, error: ApiError}; an add the server refused
 * for good has already been taken back).
 */
export class AnnotationStore extends EventTarget {
  /**
   * @param {{annotations: Annotation[], api: {annotations?: string | null, position?: string | null},
   *   token: string | null, csrfToken: string | null, writable: boolean}} options
   *   writable: false for submitted sessions and previews (no queue, nothing is sent)
   */
  constructor({ annotations, api, token, csrfToken, writable }) {
    super();
    /** @type {Map<string, Annotation>} */
    this.annotations = new Map(annotations.map((a) => [a.id, a]));
    this.api = api;
    /** @type {string | null} a change the server refused for good, until the next change */
    this.failure = null;
    /** @type {number | null} a paragraph the worker moved to while offline */
    this.queuedPosition = null;
    this.queue =
      writable && api.annotations && token
        ? new SyncQueue({ storageKey: `falte:queue:${token}`, csrfToken: csrfToken ?? '' })
        : null;
    if (!this.queue) {
      if (token && !writable) this.noteUnsent(takeStoredOperations(`falte:queue:${token}`));
      return;
    }
    this.replayPending();
    this.listeners = new AbortController();
    const { signal } = this.listeners;
    this.queue.addEventListener('change', () => this.dispatchEvent(new Event('change')), { signal });
    this.queue.addEventListener(
      'acknowledged',
      () => {
        if (this.queue?.pending === 0) this.failure = null;
        this.dispatchEvent(new Event('change'));
      },
      { signal },
    );
    this.queue.addEventListener('rejected', (event) => this.takeBack(/** @type {CustomEvent} */ (event).detail), {
      signal,
    });
  }

  /**
   * Changes left in storage for a session that was submitted before they were sent (in
   * another tab, or this one closed while offline): they can no longer be saved, so say so.
   * @param {Array<{kind: string}>} operations
   */
  noteUnsent(operations) {
    const changes = operations.filter((operation) => operation.kind === ADD || operation.kind === REMOVE).length;
    if (changes) {
      const what = changes === 1 ? '1 change' : `${changes} changes`;
      this.failure = `this task was submitted before ${what} made in this browser reached the server.`;
    }
  }

  /** Apply the changes still waiting in storage (from before a reload), so nothing is hidden. */
  replayPending() {
    for (const operation of this.queue?.operations ?? []) {
      if (operation.kind === ADD && operation.id && !this.annotations.has(operation.id)) {
        this.annotations.set(operation.id, { .../** @type {Annotation} */ (operation.body), created_at: '' });
      } else if (operation.kind === REMOVE && operation.id) {
        this.annotations.delete(operation.id);
      } else if (operation.kind === POSITION) {
        // Queued before positions carried their coalescing key: only the latest matters.
        operation.coalesce = POSITION;
        this.queuedPosition = /** @type {{paragraph_id: number}} */ (operation.body).paragraph_id;
      }
    }
  }

  get writable() {
    return Boolean(this.queue);
  }

  /** Changes not yet acknowledged by the server. */
  get pending() {
    return this.queue?.pending ?? 0;
  }

  /**
   * Record a new annotation (a client UUID makes the save idempotent).
   * @param {Omit<Annotation, 'id' | 'created_at'>} fields
   * @returns {Annotation | null}
   */
  add(fields) {
    if (!this.queue || !this.api.annotations) return null;
    const body = { id: uuid(), ...fields };
    const annotation = { ...body, created_at: new Date().toISOString() };
    this.annotations.set(body.id, annotation);
    this.failure = null;
    this.queue.enqueue(addOperation(this.api.annotations, body));
    return annotation;
  }

  /**
   * Remove an annotation (a soft delete on the server).
   * @param {string} id
   * @returns {Annotation | null} the removed annotation
   */
  remove(id) {
    const annotation = this.annotations.get(id);
    if (!annotation || !this.queue) return null;
    this.annotations.delete(id);
    this.failure = null;
    if (this.api.annotations) this.queue.enqueue(removeOperation(this.api.annotations, id));
    return annotation;
  }

  /**
   * Remember the paragraph the worker is on (only the latest is sent).
   * @param {number} paragraphId
   * @param {number} activeSeconds active time since the last position
   */
  savePosition(paragraphId, activeSeconds) {
    if (!this.queue || !this.api.position) return;
    this.queue.enqueue(positionOperation(this.api.position, positionBody(paragraphId, activeSeconds)));
  }

  /** Forget queued positions: a direct move to a new paragraph has set it already. */
  dropPositions() {
    this.queue?.drop(POSITION);
  }

  /** @param {{operation: Operation, error: ApiError}} detail */
  takeBack({ operation, error }) {
    this.failure = error.message;
    let annotation = null;
    if (operation.kind === ADD && operation.id && this.annotations.has(operation.id)) {
      annotation = /** @type {Annotation} */ (this.annotations.get(operation.id));
      this.annotations.delete(operation.id);
    }
    this.dispatchEvent(new CustomEvent('rejected', { detail: { annotation, error } }));
  }

  /** Start sending what is queued. */
  flush() {
    this.queue?.flush();
  }

  /**
   * Resolves once everything queued is sent, or the queue has stopped sending for now
   * (offline, or waiting to retry): what depends on the server having it (a move past a
   * paragraph whose suggestions were just decided) waits for it first.
   * @returns {Promise<void>}
   */
  settled() {
    const queue = this.queue;
    if (!queue || queue.pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        if (queue.pending > 0 && queue.sending) return;
        queue.removeEventListener('change', done);
        resolve();
      };
      queue.addEventListener('change', done);
      queue.flush();
      done();
    });
  }

  destroy() {
    this.listeners?.abort();
    this.queue?.destroy();
  }
}

/** A random UUID v4 (crypto.randomUUID needs a secure context; getRandomValues does not). */
export function uuid() {
  if (typeof crypto.randomUUID === 'function' && window.isSecureContext) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
