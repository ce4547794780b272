/**
 * The span rules of app/rules/spans.py (`check_annotation`), applied in the browser before an
 * annotation is sent, with the server's own messages, so that a refused Add keeps the
 * worker's input and says why next to Add. The server still checks everything.
 *
 * @module annotator/rules
 */

import { codePointLength, sliceCodePoints } from '../lib/anchoring.mjs';
import { t } from '../lib/i18n.mjs';

/** @typedef {import('./wire.mjs').WireSpan} WireSpan */

/**
 * @typedef {object} AnnotationInput
 * @property {{key: string, name: string, type: string} | null} category
 * @property {string} categoryKey
 * @property {string[]} knownCategories
 * @property {WireSpan} span
 * @property {WireSpan | null} paired
 * @property {string | null} comment
 * @property {boolean} commentRequired
 * @property {string} commentLabel
 * @property {number} maxCommentLength
 * @property {(id: number) => string | undefined} text the stored text of a paragraph reached
 * @property {number} furthest
 */

/** Why an Add of an annotation already made is refused (the server's 422 duplicate_annotation). */
export const DUPLICATE = t('You have already added this annotation (the same error type on the same text). To change it, remove it under Previous annotations and add it again.');

/**
 * The live annotation with the same category, span and paired span as `value` (offsets;
 * comment and severity aside), which the server would refuse to add again; null when none.
 * @param {Iterable<{category: string, span: WireSpan, paired_span?: WireSpan | null}>} annotations
 * @param {{category: string, span: WireSpan, paired_span?: WireSpan | null}} value
 */
export function duplicateOf(annotations, value) {
  /** @param {WireSpan | null | undefined} a @param {WireSpan | null | undefined} b */
  const same = (a, b) => (a && b ? a.paragraph_id === b.paragraph_id && a.start === b.start && a.end === b.end : !a && !b);
  for (const annotation of annotations) {
    if (annotation.category === value.category && same(annotation.span, value.span) && same(annotation.paired_span, value.paired_span)) {
      return annotation;
    }
  }
  return null;
}

/**
 * What to say next to Add about a refused Add: the server's message, or the translated one
 * for a refusal the page knows.
 * @param {Error & {code?: string}} error
 * @returns {string}
 */
export function refusalMessage(error) {
  return error.code === 'duplicate_annotation' ? DUPLICATE : error.message;
}

/**
 * The first rule the annotation breaks, as the server would word it; null when none.
 * @param {AnnotationInput} input
 * @returns {{code: string, field: string, message: string} | null}
 */
export function checkAnnotation(input) {
  try {
    check(input);
    return null;
  } catch (error) {
    if (error instanceof RuleError) return { code: error.code, field: error.field, message: error.message };
    throw error;
  }
}

class RuleError extends Error {
  /**
   * @param {string} code
   * @param {string} field
   * @param {string} message
   */
  constructor(code, field, message) {
    super(message);
    this.code = code;
    this.field = field;
  }
}

/** @param {AnnotationInput} input */
function check(input) {
  const { category, span, paired } = input;
  if (!category) {
    throw new RuleError(
      'unknown_category',
      'category',
      t('Unknown error category {key}; choose one of: {keys}.', { key: pyRepr(input.categoryKey), keys: input.knownCategories.join(', ') }),
    );
  }
  checkSpan(span, input, 'span');
  const isPaired = category.type === 'paired';
  if (isPaired && !paired) {
    throw new RuleError(
      'paired_span_required',
      'paired_span',
      t('“{name}” needs a second span: select it in Context or Current Paragraph.', { name: category.name }),
    );
  }
  if (!isPaired && paired) {
    throw new RuleError('paired_span_forbidden', 'paired_span', t('“{name}” takes a single span; remove the second span.', { name: category.name }));
  }
  if (paired) {
    if (paired.paragraph_id > span.paragraph_id) {
      throw new RuleError(
        'paired_span_later',
        'paired_span.paragraph_id',
        t('The second span must be in the same paragraph or an earlier one (it is in paragraph {paired}, the error in paragraph {span}).', {
          paired: paired.paragraph_id,
          span: span.paragraph_id,
        }),
      );
    }
    checkSpan(paired, input, 'paired_span');
    if (paired.paragraph_id === span.paragraph_id && paired.start === span.start && paired.end === span.end) {
      throw new RuleError(
        'paired_span_same',
        'paired_span',
        t(t('The second span is the same text as the first; select the other occurrence.')),
      );
    }
  }
  const { comment } = input;
  if (comment !== null && codePointLength(comment) > input.maxCommentLength) {
    throw new RuleError(
      'comment_too_long',
      'comment',
      t('The comment has {length} characters; the limit is {limit}.', { length: codePointLength(comment), limit: input.maxCommentLength }),
    );
  }
  if (input.commentRequired && !(comment ?? '').trim()) {
    throw new RuleError('comment_required', 'comment', t('Please fill in “{label}”.', { label: input.commentLabel }));
  }
}

/**
 * @param {WireSpan} span
 * @param {AnnotationInput} input
 * @param {string} field
 */
function checkSpan(span, { text: textOf, furthest }, field) {
  if (span.paragraph_id > furthest) {
    throw new RuleError(
      'beyond_furthest',
      `${field}.paragraph_id`,
      t('Paragraph {n} has not been reached yet (furthest reached: {furthest}).', { n: span.paragraph_id, furthest }),
    );
  }
  const text = textOf(span.paragraph_id);
  if (text === undefined) {
    throw new RuleError('no_such_paragraph', `${field}.paragraph_id`, t('This document has no paragraph {n}.', { n: span.paragraph_id }));
  }
  const length = codePointLength(text);
  if (!(span.start >= 0 && span.start < span.end && span.end <= length)) {
    throw new RuleError(
      'out_of_range',
      field,
      t('Offsets {start}-{end} are not a span of this paragraph (it has {length} characters; start must be below end).', {
        start: span.start,
        end: span.end,
        length,
      }),
    );
  }
  const stored = sliceCodePoints(text, span.start, span.end);
  if (stored !== span.text) {
    throw new RuleError(
      'quote_mismatch',
      `${field}.text`,
      t('The selected text does not match the paragraph at these offsets (expected {expected}, got {got}). Reload the page and select again.', {
        expected: pyRepr(stored),
        got: pyRepr(span.text),
      }),
    );
  }
  if (!stored.trim()) throw new RuleError('blank_span', field, t(t('The selected span is empty or only whitespace.')));
}

/**
 * Python's repr() of a str, for the messages that quote one (printable text; the usual
 * escapes for quotes, backslashes and control characters).
 * @param {string} value
 * @returns {string}
 */
export function pyRepr(value) {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = '';
  for (const char of value) {
    const code = /** @type {number} */ (char.codePointAt(0));
    if (char === '\\') out += '\\\\';
    else if (char === quote) out += `\\${quote}`;
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return `${quote}${out}${quote}`;
}
