/**
 * The severity step (taxonomy `severities:`, MQM-style): after the category, the worker
 * picks one of the severities the category offers, by button or by its key. A taxonomy
 * without severities renders no step (templates/annotate/session.html) and gets no
 * SeverityStep: the page and what it sends stay exactly as without this module.
 *
 * Steps (steps.mjs) holds one of these and calls its small hooks: offerFor on a category
 * change, choose, reset, render. The buttons say their name and weight ("Minor (1)").
 * Accept of a model suggestion asks for a severity too (suggestions.mjs): `choiceFor`
 * builds that question inside the suggestion's card, with the same names.
 *
 * @module annotator/severity
 */

import { button, element } from '../lib/dom.mjs';
import { t } from '../lib/i18n.mjs';
import { isTextField } from './keyboard.mjs';

/** Worker-visible words, in one place. */
const TEXT = {
  question: t('Severity of this error'),
  cancel: t('Cancel'),
};

/**
 * A severity as the page gets it (Taxonomy.to_public_dict).
 * @typedef {{key: string, name: string, weight: number, description?: string | null,
 *   shortcut?: string | null}} Severity
 */

export class SeverityStep {
  /**
   * @param {{$step: HTMLElement, severities: Severity[], offered: Record<string, string[]>}} options
   *   offered: category key -> the severity keys it offers
   */
  constructor({ $step, severities, offered }) {
    this.$step = $step;
    this.severities = new Map(severities.map((s) => [s.key, s]));
    this.offered = offered;
    /** @type {Map<string, string>} shortcut -> severity key */
    this.shortcuts = new Map(severities.filter((s) => s.shortcut).map((s) => [/** @type {string} */ (s.shortcut), s.key]));
    this.$buttons = /** @type {HTMLButtonElement[]} */ ([...$step.querySelectorAll('.js-severity')]);
    /** @type {string | null} */
    this.value = null;
    /** @type {string | null} the category whose severities are offered (null: all) */
    this.category = null;
    this.readOnly = false;
  }

  /**
   * The step of the page's form, or null when the taxonomy has no severities.
   * @param {HTMLElement} $form
   * @param {{severities?: Severity[], category_severities?: Record<string, string[]>}} taxonomy
   * @returns {SeverityStep | null}
   */
  static fromForm($form, taxonomy) {
    const $step = /** @type {HTMLElement | null} */ ($form.querySelector('.js-step-severity'));
    if (!$step || !taxonomy.severities?.length) return null;
    return new SeverityStep({ $step, severities: taxonomy.severities, offered: taxonomy.category_severities ?? {} });
  }

  /**
   * The severity keys offered now: the chosen category's, or all before one is chosen.
   * @returns {string[]}
   */
  offeredKeys() {
    const all = [...this.severities.keys()];
    return this.category ? (this.offered[this.category] ?? all) : all;
  }

  /**
   * The category changed: offer its severities; a chosen one it does not offer is dropped.
   * @param {string | null} category
   */
  offerFor(category) {
    this.category = category;
    if (this.value && !this.offeredKeys().includes(this.value)) this.value = null;
  }

  /**
   * @param {string} key
   * @returns {boolean} false when the key is not offered now
   */
  choose(key) {
    if (this.readOnly || !this.offeredKeys().includes(key)) return false;
    this.value = key;
    return true;
  }

  /**
   * A severity kept in a draft or a refused Add, if still offered.
   * @param {string | null | undefined} key
   */
  restore(key) {
    this.value = key && this.offeredKeys().includes(key) ? key : null;
  }

  reset() {
    this.value = null;
    this.category = null;
  }

  /** @returns {boolean} true while Add still needs a severity */
  isMissing() {
    return this.value === null;
  }

  /** @param {boolean} readOnly */
  setReadOnly(readOnly) {
    this.readOnly = readOnly;
    if (readOnly) this.reset();
  }

  /**
   * The severities a category offers, in the taxonomy's order.
   * @param {string} category
   * @returns {Severity[]}
   */
  offeredFor(category) {
    const keys = this.offered[category] ?? [...this.severities.keys()];
    return keys.map((key) => this.severities.get(key)).filter((s) => s !== undefined);
  }

  /**
   * The question an Accept asks before it adds (suggestions.mjs): a group named "Severity
   * of this error" with a button per severity the category offers (data-action="severity")
   * and Cancel (data-action="cancel-severity"), each described by the suggestion's text.
   * @param {string} category
   * @param {string} describedBy
   * @returns {HTMLElement}
   */
  choiceFor(category, describedBy) {
    const $group = element('div', 'suggestion__severity');
    $group.setAttribute('role', 'group');
    $group.setAttribute('aria-label', TEXT.question);
    const $label = element('p', 'suggestion__severity-label', TEXT.question);
    $label.setAttribute('aria-hidden', 'true');
    const buttons = this.offeredFor(category).map((severity) =>
      actionButton(`${severity.name} (${severity.weight})`, 'severity', 'button--primary', describedBy, severity.key),
    );
    buttons.push(actionButton(TEXT.cancel, 'cancel-severity', 'button--link', describedBy));
    $group.append($label, ...buttons);
    return $group;
  }

  /**
   * The severity's display name (the Previous annotations table), or null.
   * @param {string | null | undefined} key
   */
  name(key) {
    return key ? (this.severities.get(key)?.name ?? key) : null;
  }

  /**
   * The key a key press chooses, by the page's rules for shortcuts (not while typing, no
   * modifiers), or null.
   * @param {KeyboardEvent} event
   * @returns {string | null}
   */
  keyFor(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return null;
    if (isTextField(event.target)) return null;
    return this.shortcuts.get(event.key) ?? null;
  }

  /** Bring the buttons in line with the state. */
  render() {
    const offered = this.offeredKeys();
    for (const $button of this.$buttons) {
      const key = $button.dataset.severity ?? '';
      const $item = /** @type {HTMLElement} */ ($button.closest('.severities__item') ?? $button);
      $item.hidden = !offered.includes(key);
      $button.disabled = this.readOnly;
      $button.setAttribute('aria-pressed', String(key === this.value));
    }
  }
}

/**
 * @param {string} label
 * @param {string} action
 * @param {string} classes
 * @param {string} describedBy
 * @param {string} [severity]
 */
function actionButton(label, action, classes, describedBy, severity) {
  const $button = button(label, `button button--small ${classes}`, { action, describedBy });
  if (severity) {
    $button.dir = 'auto'; // the severity's name comes from the taxonomy
    $button.dataset.severity = severity;
  }
  return $button;
}
