/**
 * The severity step (taxonomy `severities:`, MQM-style): after the category, the worker
 * picks one of the severities the category offers, by button or by its key. A taxonomy
 * without severities renders no step (templates/annotate/session.html) and gets no
 * SeverityStep: the page and what it sends stay exactly as without this module.
 *
 * Steps (steps.mjs) holds one of these and calls its small hooks: offerFor on a category
 * change, choose, reset, render. The buttons say their name and weight ("Minor (1)").
 *
 * @module annotator/severity
 */

import { isTextField } from './keyboard.mjs';

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
