/**
 * The page furniture around the task: the collapsible instructions panel (its state
 * remembered in localStorage) and the message for touch-only devices.
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

/**
 * True on devices whose only pointer is coarse (phones, tablets without a mouse).
 * @returns {boolean}
 */
export function isTouchOnly() {
  return window.matchMedia('(pointer: coarse)').matches && !window.matchMedia('(any-pointer: fine)').matches;
}
