/**
 * The annotator's wire types: the JSON shapes the page receives (its bootstrap, the
 * answers of the JSON API) and sends (annotations, removals, positions), as the JSON API
 * of docs/contracts.md#2-json-api names them, and the queue operations that carry the
 * writes. Nothing here touches the DOM or the network.
 *
 * @module annotator/wire
 */

/**
 * A span as the API sends and takes it: code-point offsets into one paragraph's text.
 * @typedef {{paragraph_id: number, start: number, end: number, text: string}} WireSpan
 */

/**
 * An annotation (POST /api/sessions/<token>/annotations and the bootstrap's list).
 * @typedef {{id: string, category: string, span: WireSpan, paired_span: WireSpan | null,
 *   comment: string | null, severity?: string | null, created_at?: string}} Annotation
 */

/** @typedef {{key: string, name: string, color: string, type: string}} Category */

/**
 * A model suggestion (GET /api/sessions/<token>/suggestions and the bootstrap's list):
 * `decision` and `annotation_id` are the session's, as the server last knew them.
 * @typedef {{id: string, category: string, labels: string[], span: WireSpan,
 *   paired_span: WireSpan | null, question: string | null, comment: string | null,
 *   decision?: string | null, annotation_id?: string | null}} Suggestion
 */

/** @typedef {{paragraph_id: number, text: string}} WireParagraph */

/**
 * What PUT /api/sessions/<token>/position answers: the paragraphs it reveals.
 * @typedef {{paragraphs?: WireParagraph[], furthest?: number}} PositionAnswer
 */

/**
 * What POST /api/sessions/<token>/submit answers (also the bootstrap's `completion`).
 * @typedef {{completion_code: string, redirect_url?: string | null, outcome?: string | null, shown_code?: string | null}} Completion
 */

/** @typedef {{submit_to: string, assignment_id: string}} MturkTarget */

/**
 * The page's `data-bootstrap` (templates/annotate/session.html).
 * @typedef {object} Bootstrap
 * @property {string | null} token
 * @property {string} csrf_token
 * @property {{annotations?: string | null, position?: string | null, submit?: string | null,
 *   heartbeat?: string | null, suggestions?: string | null}} api
 * @property {{total_paragraphs: number, paragraphs: WireParagraph[]}} document
 * @property {{categories: any[], comment?: {required?: boolean, label?: string} | null,
 *   severities?: import('./severity.mjs').Severity[], category_severities?: Record<string, string[]>}} taxonomy
 * @property {Annotation[]} annotations
 * @property {number} [position]
 * @property {number} [furthest]
 * @property {string} status
 * @property {boolean} [read_only]
 * @property {boolean} [preview]
 * @property {boolean} [viewer]
 * @property {number} max_comment_length
 * @property {Completion | null} [completion]
 * @property {MturkTarget | null} [mturk]
 * @property {any[]} [entities]
 * @property {import('./practice.mjs').PracticeOptions} [practice] practice mode (app/crowd/training)
 * @property {Suggestion[]} [suggestions]
 */

/** Operation kinds of the annotator's queue (lib/sync-queue keeps them as given). */
export const ADD = 'add';
export const REMOVE = 'remove';
export const POSITION = 'position';
export const REJECT = 'reject';
export const UNREJECT = 'unreject';

/**
 * The queued write that saves an annotation (its client id makes the save idempotent).
 * @param {string} url the session's annotations URL
 * @param {Omit<Annotation, 'created_at'>} body
 */
export function addOperation(url, body) {
  return { kind: ADD, id: body.id, method: 'POST', url, body };
}

/**
 * The queued write that removes an annotation (a soft delete on the server).
 * @param {string} url the session's annotations URL
 * @param {string} id
 */
export function removeOperation(url, id) {
  return { kind: REMOVE, id, method: 'DELETE', url: `${url}/${encodeURIComponent(id)}` };
}

/**
 * The body of a position update: the paragraph, and the active time since the last one.
 * @param {number} paragraphId
 * @param {number} activeSeconds
 * @returns {{paragraph_id: number, active_seconds: number}}
 */
export function positionBody(paragraphId, activeSeconds) {
  return { active_seconds: activeSeconds, paragraph_id: paragraphId };
}

/**
 * The queued write of the worker's position: only the latest one matters (`coalesce`).
 * @param {string} url the session's position URL
 * @param {{paragraph_id: number}} body
 */
export function positionOperation(url, body) {
  return { kind: POSITION, coalesce: POSITION, method: 'PUT', url, body };
}

/**
 * The queued write that rejects a suggestion (its client id makes it idempotent).
 * @param {string} url the session's suggestions URL
 * @param {string} suggestionId
 * @param {string} id a client UUID
 */
export function rejectOperation(url, suggestionId, id) {
  const target = `${url}/${encodeURIComponent(suggestionId)}/rejection`;
  return { kind: REJECT, id, suggestion: suggestionId, method: 'POST', url: target, body: { id } };
}

/**
 * The queued write that undoes a suggestion's rejection.
 * @param {string} url the session's suggestions URL
 * @param {string} suggestionId
 */
export function unrejectOperation(url, suggestionId) {
  const target = `${url}/${encodeURIComponent(suggestionId)}/rejection`;
  return { kind: UNREJECT, suggestion: suggestionId, method: 'DELETE', url: target };
}
