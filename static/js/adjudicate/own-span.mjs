/**
 * The "Add my own span" form of the adjudication page: its fields (typed offsets, or
 * filled from a mouse selection by adjudicate.mjs), the second span of paired categories,
 * and the preview of the spans it describes. Offsets are code points, converted with
 * lib/anchoring.mjs only.
 *
 * @module adjudicate/own-span
 */

import { codePointLength, sliceCodePoints } from '../lib/anchoring.mjs';
import { button, element } from '../lib/dom.mjs';

/**
 * @param {{text: string} | null | undefined} span
 * @returns {string}
 */
export function quote(span) {
  return span ? `“${span.text}”` : '';
}

/**
 * The form for paragraph n (0-based), with the given category select and, when the
 * taxonomy has severities, its labelled severity select.
 * @param {number} n
 * @param {HTMLSelectElement} $select
 * @param {HTMLElement[]} [severity] the label and select, or nothing
 * @returns {HTMLFormElement}
 */
export function ownSpanForm(n, $select, severity = []) {
  const $form = element('form', 'adj-own');
  $form.dataset.form = 'own';
  $form.dataset.ownParagraph = String(n);
  $form.id = `own-${n}`;
  const $fieldset = element('fieldset', 'adj-own__fieldset');
  $fieldset.append(element('legend', '', `Add my own span in paragraph ${n + 1}`));
  const field = (/** @type {string} */ name, /** @type {string} */ label) => {
    const $wrap = element('div', 'field adj-own__field');
    const $label = element('label', 'label', label);
    $label.setAttribute('for', `own-${n}-${name}`);
    const $input = element('input', 'input');
    $input.type = 'number';
    $input.id = `own-${n}-${name}`;
    $input.name = name;
    $input.min = '0';
    $input.inputMode = 'numeric';
    $wrap.append($label, $input);
    return $wrap;
  };
  const $category = element('div', 'field adj-own__field');
  const $categoryLabel = element('label', 'label', 'Category');
  $categoryLabel.setAttribute('for', $select.id);
  $category.append($categoryLabel, $select);
  const $severity = element('div', 'field adj-own__field');
  $severity.append(...severity);
  const $paired = element('fieldset', 'adj-own__paired');
  $paired.dataset.js = 'paired';
  $paired.append(
    element('legend', '', 'Second span (paired categories)'),
    field('paired_paragraph', 'Second span: paragraph number'),
    field('paired_start', 'Second span: start'),
    field('paired_end', 'Second span: end'),
  );
  const $target = element('label', 'field--check');
  const $check = element('input');
  $check.type = 'checkbox';
  $check.name = 'select_second';
  $target.append($check, ' My next mouse selection is the second span');
  $paired.append($target);
  const $preview = element('p', 'adj-own__preview');
  $preview.dataset.js = 'preview';
  $preview.setAttribute('aria-live', 'polite');
  $preview.textContent = 'Select text in the paragraph above, or type its start and end (characters from 0).';
  const $save = button('Save my span', 'button button--primary button--small', { type: 'submit' });
  $fieldset.append($category, ...(severity.length ? [$severity] : []), field('start', 'Start'), field('end', 'End'), $paired, $preview, $save);
  $form.append($fieldset);
  return $form;
}

/**
 * Show the second-span fields only for a paired category.
 * @param {HTMLFormElement} $form
 * @param {{key: string, type: string}[]} categories
 */
export function togglePaired($form, categories) {
  const key = /** @type {HTMLSelectElement} */ ($form.elements.namedItem('category')).value;
  const $paired = /** @type {HTMLElement} */ ($form.querySelector('[data-js="paired"]'));
  $paired.hidden = categories.find((c) => c.key === key)?.type !== 'paired';
}

/**
 * The form's spans from its fields, with texts from the stored paragraphs.
 * @param {HTMLFormElement} $form
 * @param {{text: string}[]} paragraphs
 */
export function ownSpans($form, paragraphs) {
  const value = (/** @type {string} */ name) => /** @type {HTMLInputElement} */ ($form.elements.namedItem(name)).value;
  const make = (/** @type {number} */ paragraph, /** @type {string} */ start, /** @type {string} */ end) => {
    const text = paragraphs[paragraph]?.text;
    const from = Number.parseInt(start, 10);
    const to = Number.parseInt(end, 10);
    if (text === undefined || !(from >= 0 && to > from && to <= codePointLength(text))) return null;
    return { paragraph_id: paragraph, start: from, end: to, text: sliceCodePoints(text, from, to) };
  };
  const n = Number($form.dataset.ownParagraph);
  const span = make(n, value('start'), value('end'));
  const pairedVisible = !(/** @type {HTMLElement} */ ($form.querySelector('[data-js="paired"]')).hidden);
  const pairedParagraph = Number.parseInt(value('paired_paragraph'), 10) - 1;
  const paired = pairedVisible ? make(pairedParagraph, value('paired_start'), value('paired_end')) : null;
  return { span, paired, pairedVisible };
}

/**
 * Say in the form which text its fields select.
 * @param {HTMLFormElement} $form
 * @param {{text: string}[]} paragraphs
 */
export function showPreview($form, paragraphs) {
  const { span, paired, pairedVisible } = ownSpans($form, paragraphs);
  const $preview = /** @type {HTMLElement} */ ($form.querySelector('[data-js="preview"]'));
  if (!span) {
    $preview.textContent = 'No valid span yet: start must be below end, within the paragraph.';
    return;
  }
  $preview.textContent = `Span: ${quote(span)}${pairedVisible ? `; second span: ${paired ? quote(paired) : 'none yet'}` : ''}`;
}
