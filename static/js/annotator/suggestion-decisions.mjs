/**
 * The worker's decisions on model suggestions (issue 18), as plain data: which
 * suggestions the session has, which are undecided, accepted, edited or rejected, what
 * Accept, Reject, Edit and Undo do to them, what survives a reload and what blocks a move.
 * No DOM and no network: the view (annotator/suggestions) draws this state and sends the
 * writes it hands back; tests/e2e/test_js_units.py runs it on its own.
 *
 * A suggestion's decision is derived, never stored apart: a live annotation made from it
 * (accepted / edited), else a rejection not undone, else undecided. Removing that
 * annotation makes it undecided again. After a reload the decisions come back from the
 * same sources: the live annotations (the store replays its queued Adds), the rejections
 * the server knew (`decision: 'rejected'` in the bootstrap), the Rejects and Undos still
 * queued (`replay`), and an Edit left unfinished (`resumeEditing`, from the draft).
 *
 * The worker cannot move past a paragraph with undecided suggestions (`blocksMove`; the
 * server says 422 `suggestions_undecided`).
 *
 * @module annotator/suggestion-decisions
 */

import { REJECT, UNREJECT, rejectOperation, unrejectOperation } from './wire.mjs';

/**
 * @typedef {import('./wire.mjs').WireSpan} WireSpan
 * @typedef {import('./wire.mjs').Annotation} Annotation
 * @typedef {import('./wire.mjs').Suggestion} Suggestion
 * @typedef {'accepted' | 'edited' | 'rejected'} Decision
 * @typedef {ReturnType<typeof acceptFields> & {severity?: string}} AcceptedFields
 */

export class SuggestionDecisions {
  /**
   * @param {{suggestions: Suggestion[], annotations: Map<string, Annotation>, writable: boolean,
   *   url?: string | null, severities?: ((category: string) => string[]) | null}} options
   *   annotations: the session's live annotations (the store's map: read here, never written)
   *   writable: false for submitted sessions and previews (no suggestion is shown or decided)
   *   url: the session's suggestions URL, the address of Reject and Undo (none: no Reject)
   *   severities: the severity keys a category offers, when the taxonomy has severities:
   *     an Accept then asks for one before it adds
   */
  constructor({ suggestions, annotations, writable, url = null, severities = null }) {
    this.annotations = annotations;
    this.writable = writable;
    this.url = url;
    this.severities = severities;
    /** @type {Map<string, Suggestion>} */
    this.byId = new Map();
    /** suggestion id -> the client id of its live rejection ('' when the server sent it) @type {Map<string, string>} */
    this.rejected = new Map();
    /** @type {string | null} the suggestion being edited in the steps form */
    this.editing = null;
    /** @type {string | null} the suggestion whose Accept waits for a severity */
    this.asking = null;
    /** The Current Paragraph. */
    this.position = 0;
    this.merge(suggestions);
  }

  /**
   * Take in suggestions (the bootstrap's, or those of newly reached paragraphs); a
   * rejection the server knows counts the first time a suggestion is seen.
   * @param {Suggestion[]} suggestions
   */
  merge(suggestions) {
    for (const suggestion of suggestions) {
      const known = this.byId.has(suggestion.id);
      this.byId.set(suggestion.id, suggestion);
      if (!known && suggestion.decision === 'rejected') this.rejected.set(suggestion.id, '');
    }
  }

  /**
   * Rejections and undos still waiting in the queue (from before a reload) count already.
   * @param {Iterable<{kind?: string, id?: string, suggestion?: string}>} operations
   */
  replay(operations) {
    for (const operation of operations) {
      const id = operation.suggestion;
      if (!id) continue;
      if (operation.kind === REJECT) this.rejected.set(id, operation.id ?? '');
      if (operation.kind === UNREJECT) this.rejected.delete(id);
    }
  }

  /**
   * @param {string | null | undefined} id
   * @returns {Suggestion | undefined}
   */
  get(id) {
    return id ? this.byId.get(id) : undefined;
  }

  /**
   * The live annotation made from a suggestion, if any.
   * @param {string} id
   * @returns {Annotation & {suggestion_id?: string, origin?: string} | undefined}
   */
  annotationOf(id) {
    for (const annotation of this.annotations.values()) {
      if (/** @type {any} */ (annotation).suggestion_id === id) return annotation;
    }
    return undefined;
  }

  /**
   * @param {Suggestion} suggestion
   * @returns {Decision | null} null: undecided
   */
  decision(suggestion) {
    const annotation = this.annotationOf(suggestion.id);
    if (annotation?.origin) return annotation.origin === 'suggestion-accepted' ? 'accepted' : 'edited';
    if (annotation) return isAccept(suggestion, annotation) ? 'accepted' : 'edited';
    return this.rejected.has(suggestion.id) ? 'rejected' : null;
  }

  /**
   * A paragraph's suggestions in reading order.
   * @param {number} paragraphId
   * @returns {Suggestion[]}
   */
  of(paragraphId) {
    return [...this.byId.values()]
      .filter((s) => s.span.paragraph_id === paragraphId)
      .sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end);
  }

  /** The suggestions the page lists now: the Current Paragraph's (none when read-only). */
  shown() {
    return this.writable ? this.of(this.position) : [];
  }

  /**
   * Undecided suggestions between the current paragraph and a target (excluded).
   * @param {number} from
   * @param {number} to
   * @returns {Suggestion[]}
   */
  undecided(from, to) {
    return [...this.byId.values()].filter(
      (s) => s.span.paragraph_id >= from && s.span.paragraph_id < to && this.decision(s) === null,
    );
  }

  /**
   * Whether a move from paragraph `from` to `to` must wait for decisions.
   * @param {number} from
   * @param {number} to
   */
  blocksMove(from, to) {
    return this.writable && to > from && this.undecided(from, to).length > 0;
  }

  /**
   * The suggestions outlined in a paragraph's text: the undecided ones of the Current
   * Paragraph.
   * @param {number} paragraphId
   * @returns {Suggestion[]}
   */
  outlined(paragraphId) {
    if (paragraphId !== this.position || !this.writable) return [];
    return this.of(paragraphId).filter((s) => this.decision(s) === null);
  }

  /**
   * The Current Paragraph changed: an Edit or a severity question there is dropped.
   * @param {number} position
   * @returns {number} the paragraph before
   */
  moveTo(position) {
    const before = this.position;
    this.position = position;
    this.editing = null;
    this.asking = null;
    return before;
  }

  /**
   * Accept: the Add to make now, or (severities) a question to ask first; null when the
   * suggestion is decided already.
   * @param {string} id
   * @returns {{ask: true} | {add: AcceptedFields} | null}
   */
  accept(id) {
    const suggestion = this.get(id);
    if (!suggestion || this.decision(suggestion) !== null) return null;
    if (this.severities) {
      this.asking = id;
      return { ask: true };
    }
    return { add: acceptFields(suggestion) };
  }

  /**
   * The severity asked by an Accept was chosen: the Add to make, or null when no Accept
   * asks or the key is not one the suggestion's category offers.
   * @param {string | null} id the suggestion asked about (null: the one asking now)
   * @param {string} key
   * @returns {AcceptedFields | null}
   */
  acceptWithSeverity(id, key) {
    const suggestion = this.get(id ?? this.asking);
    if (!suggestion || this.asking !== suggestion.id || !this.severities?.(suggestion.category).includes(key)) {
      return null;
    }
    this.asking = null;
    return { ...acceptFields(suggestion), severity: key };
  }

  cancelAsking() {
    this.asking = null;
  }

  /**
   * Reject: the queued write to send, or null when it cannot be rejected now.
   * @param {string} id
   * @param {string} clientId a client UUID: the write is idempotent
   */
  reject(id, clientId) {
    const suggestion = this.get(id);
    if (!suggestion || this.decision(suggestion) !== null || !this.url) return null;
    this.rejected.set(id, clientId);
    return rejectOperation(this.url, id, clientId);
  }

  /**
   * Undo of a rejection: the queued write to send, or null when it is not rejected.
   * @param {string} id
   */
  undo(id) {
    if (!this.rejected.has(id) || !this.url) return null;
    this.rejected.delete(id);
    return unrejectOperation(this.url, id);
  }

  /**
   * Edit: the suggestion goes into the steps form; its Add then names it.
   * @param {string} id
   * @returns {boolean} false when it is decided already
   */
  edit(id) {
    const suggestion = this.get(id);
    if (!suggestion || this.decision(suggestion) !== null) return false;
    this.editing = id;
    return true;
  }

  /** @returns {boolean} whether an Edit was dropped */
  cancelEdit() {
    if (this.editing === null) return false;
    this.editing = null;
    return true;
  }

  /**
   * An Edit left unfinished before a reload (annotator/draft): editing again, when the
   * suggestion is still undecided in the Current Paragraph.
   * @param {string} id
   * @returns {boolean}
   */
  resumeEditing(id) {
    const suggestion = this.get(id);
    if (!suggestion || suggestion.span.paragraph_id !== this.position || this.decision(suggestion) !== null) {
      return false;
    }
    this.editing = id;
    return true;
  }

  /**
   * The fields an Add takes from the suggestion being edited (none when not editing, or
   * when it was decided meanwhile); the Edit is over.
   * @returns {{suggestion_id?: string}}
   */
  takeEditing() {
    const suggestion = this.get(this.editing);
    this.editing = null;
    return suggestion && this.decision(suggestion) === null ? { suggestion_id: suggestion.id } : {};
  }

  /**
   * The server refused a rejection or its undo for good: back to what it knows.
   * @param {{kind?: string, suggestion?: string} | null | undefined} operation
   * @returns {boolean} whether the operation was a suggestion's
   */
  refused(operation) {
    if (!operation?.suggestion) return false;
    if (operation.kind === REJECT) this.rejected.delete(operation.suggestion);
    return true;
  }
}

/**
 * The Add an Accept makes: the suggestion as it is.
 * @param {Suggestion} suggestion
 */
export function acceptFields(suggestion) {
  return {
    category: suggestion.category,
    span: suggestion.span,
    paired_span: suggestion.paired_span,
    comment: suggestion.comment,
    suggestion_id: suggestion.id,
  };
}

/**
 * Whether an annotation keeps everything the suggestion said (the server's rule, in
 * app/suggestions/decisions.py): else it is an edit.
 * @param {Suggestion} suggestion
 * @param {Annotation} annotation
 */
export function isAccept(suggestion, annotation) {
  const same = (/** @type {WireSpan | null} */ a, /** @type {WireSpan | null} */ b) =>
    a === b || Boolean(a && b && a.paragraph_id === b.paragraph_id && a.start === b.start && a.end === b.end);
  return (
    annotation.category === suggestion.category &&
    same(annotation.span, suggestion.span) &&
    same(annotation.paired_span ?? null, suggestion.paired_span ?? null) &&
    (annotation.comment ?? null) === (suggestion.comment ?? null)
  );
}
