/**
 * The annotation being made (steps 1-4: span, category, paired span, comment), kept in
 * localStorage per session token so that a reload does not lose it; like the retry queue
 * of lib/sync-queue.mjs, a blocked or full storage only means the draft is not kept.
 *
 * @module annotator/draft
 */

/** @typedef {import('./wire.mjs').WireSpan} WireSpan */

/**
 * @typedef {object} Draft
 * @property {WireSpan | null} span
 * @property {WireSpan | null} paired
 * @property {string | null} category
 * @property {string} comment
 * @property {string | null} [severity] only with a taxonomy that has severities
 * @property {string | null} [suggestion_id] the suggestion being edited (Edit), so that
 *   the Add after a reload still records an edit of it (annotator/suggestions)
 */

export class DraftStore {
  /** @param {{token: string | null}} options no token (a preview): nothing is kept */
  constructor({ token }) {
    this.key = token ? `falte:draft:${token}` : null;
  }

  /**
   * The saved draft, or null when none (or unreadable).
   * @returns {Draft | null}
   */
  load() {
    if (!this.key) return null;
    try {
      const raw = window.localStorage.getItem(this.key);
      const draft = raw ? JSON.parse(raw) : null;
      if (!draft || typeof draft !== 'object') return null;
      return {
        span: isSpan(draft.span) ? draft.span : null,
        paired: isSpan(draft.paired) ? draft.paired : null,
        category: typeof draft.category === 'string' ? draft.category : null,
        comment: typeof draft.comment === 'string' ? draft.comment : '',
        ...(typeof draft.severity === 'string' ? { severity: draft.severity } : {}),
        ...(typeof draft.suggestion_id === 'string' ? { suggestion_id: draft.suggestion_id } : {}),
      };
    } catch {
      return null;
    }
  }

  /**
   * Keep the draft; an empty one is removed (the suggestion being edited alone is no
   * draft: the form holds nothing of it).
   * @param {Draft} draft
   */
  save(draft) {
    if (!this.key) return;
    try {
      if (draft.span || draft.paired || draft.category || draft.comment || draft.severity) {
        window.localStorage.setItem(this.key, JSON.stringify(draft));
      } else {
        window.localStorage.removeItem(this.key);
      }
    } catch {
      // Storage full or blocked (some third-party iframes): the draft is just not kept.
    }
  }
}

/**
 * The draft's spans that still fit the page: the span in the current paragraph, the
 * paired span in one up to it, each still reading the same text there.
 * @param {Draft} draft
 * @param {number} position the current paragraph
 * @param {(span: WireSpan) => Range | null} range the span's range on the page, if shown
 * @returns {Draft}
 */
export function fittingDraft(draft, position, range) {
  const fits = (/** @type {WireSpan | null} */ span, /** @type {boolean} */ paired) => {
    if (!span) return null;
    const inPlace = paired ? span.paragraph_id <= position : span.paragraph_id === position;
    const $range = inPlace ? range(span) : null;
    return $range && $range.toString() === span.text ? span : null;
  };
  return { ...draft, span: fits(draft.span, false), paired: fits(draft.paired, true) };
}

/**
 * @param {unknown} value
 * @returns {value is WireSpan}
 */
function isSpan(value) {
  if (!value || typeof value !== 'object') return false;
  const span = /** @type {Record<string, unknown>} */ (value);
  return (
    Number.isInteger(span.paragraph_id) &&
    Number.isInteger(span.start) &&
    Number.isInteger(span.end) &&
    typeof span.text === 'string'
  );
}
