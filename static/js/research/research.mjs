/**
 * Copy buttons of the researcher console (`data-module="research"`).
 *
 * Each `.js-copy` button copies the value of the field its `aria-controls` names and says
 * so in the root's `.js-copy-status` live region and on the button itself. Without the
 * asynchronous Clipboard API (plain HTTP on another host) the field's text is selected so
 * that Ctrl+C works, and the status says so.
 *
 * @module research/research
 */

const RESET_AFTER_MS = 2000;

export default class CopyFields {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.$root = $root;
    this.$status = /** @type {HTMLElement | null} */ ($root.querySelector('.js-copy-status'));
    /** @type {Map<HTMLButtonElement, number>} */
    this.timers = new Map();
    this.listeners = new AbortController();
    $root.addEventListener('click', (event) => this.onClick(event), { signal: this.listeners.signal });
  }

  /** @param {MouseEvent} event */
  async onClick(event) {
    const $button = /** @type {HTMLElement} */ (event.target).closest('.js-copy');
    if (!($button instanceof HTMLButtonElement) || !this.$root.contains($button)) return;
    const $source = document.getElementById($button.getAttribute('aria-controls') ?? '');
    if (!($source instanceof HTMLInputElement || $source instanceof HTMLTextAreaElement)) return;
    const label = this.labelFor($source);
    try {
      if (!navigator.clipboard) throw new Error('no clipboard API');
      await navigator.clipboard.writeText($source.value);
      this.announce($button, `${label} copied to the clipboard.`, 'Copied');
    } catch {
      $source.focus();
      $source.select();
      this.announce($button, `${label} is selected: press Ctrl+C (⌘C) to copy it.`, 'Selected');
    }
  }

  /**
   * @param {HTMLInputElement | HTMLTextAreaElement} $source
   * @returns {string}
   */
  labelFor($source) {
    const $label = this.$root.querySelector(`label[for="${CSS.escape($source.id)}"]`);
    return $label?.textContent?.trim() || 'The text';
  }

  /**
   * @param {HTMLButtonElement} $button
   * @param {string} message
   * @param {string} buttonText
   */
  announce($button, message, buttonText) {
    if (this.$status) this.$status.textContent = message;
    const $text = $button.firstChild;
    if (!$text || $text.nodeType !== Node.TEXT_NODE) return;
    const original = $button.dataset.label ?? $text.textContent ?? '';
    $button.dataset.label = original;
    $text.textContent = `${buttonText} `;
    $button.classList.add('is-done');
    window.clearTimeout(this.timers.get($button));
    this.timers.set(
      $button,
      window.setTimeout(() => {
        $text.textContent = original;
        $button.classList.remove('is-done');
        this.timers.delete($button);
      }, RESET_AFTER_MS),
    );
  }

  destroy() {
    this.listeners.abort();
    for (const timer of this.timers.values()) window.clearTimeout(timer);
    this.timers.clear();
  }
}
