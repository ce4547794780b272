/**
 * The page furniture around the task: the collapsible instructions panel (its state
 * remembered in localStorage), the passing hint under the Current Paragraph, the
 * in-page "Submit?" question. (The message for touch-only devices is CSS alone:
 * templates/_touch_warning.html.)
 *
 * @module annotator/panels
 */

const INSTRUCTIONS_KEY = 'falte:instructions-hidden';

export class InstructionsPanel {
  /**
   * @param {{$root: HTMLElement, $panel: HTMLElement, $toggle: HTMLElement}} options
   *   $root gets `annotator--no-instructions` while the panel is hidden (for the layout).
   */
  constructor({ $root, $panel, $toggle }) {
    this.$root = $root;
    this.$panel = $panel;
    this.$toggle = $toggle;
    let hidden = false;
    try {
      hidden = window.localStorage.getItem(INSTRUCTIONS_KEY) === '1';
    } catch {
      hidden = false; // storage blocked: start open
    }
    this.show(!hidden);
  }

  toggle() {
    const open = this.$panel.hidden;
    this.show(open);
    try {
      window.localStorage.setItem(INSTRUCTIONS_KEY, open ? '0' : '1');
    } catch {
      // Storage blocked: the choice is just not remembered.
    }
  }

  /** @param {boolean} open */
  show(open) {
    this.$panel.hidden = !open;
    this.$toggle.setAttribute('aria-expanded', String(open));
    this.$root.classList.toggle('annotator--no-instructions', !open);
  }
}

/** A hint under the Current Paragraph that hides itself after a few seconds. */
export class Hint {
  /** @param {{$hint: HTMLElement, ms?: number}} options */
  constructor({ $hint, ms = 6000 }) {
    this.$hint = $hint;
    this.ms = ms;
    /** @type {number | undefined} */
    this.timer = undefined;
  }

  /** @param {string} message '' hides the hint */
  show(message) {
    window.clearTimeout(this.timer);
    this.$hint.textContent = message;
    this.$hint.hidden = !message;
    if (message) this.timer = window.setTimeout(() => this.show(''), this.ms);
  }

  destroy() {
    window.clearTimeout(this.timer);
  }
}

/** Submit asks first, in the page (no native dialog): it cannot be undone. */
export class SubmitQuestion {
  /** @param {{$question: HTMLElement, $submit: HTMLButtonElement}} options */
  constructor({ $question, $submit }) {
    this.$question = $question;
    this.$submit = $submit;
  }

  get open() {
    return !this.$question.hidden;
  }

  ask() {
    this.$question.hidden = false;
    /** @type {HTMLElement} */ (this.$question.querySelector('.js-submit-confirm')).focus();
  }

  /** @param {{focus?: boolean}} [options] focus: give the focus back to Submit */
  close({ focus = false } = {}) {
    this.$question.hidden = true;
    if (focus) this.$submit.focus();
  }
}
