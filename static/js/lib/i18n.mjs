/**
 * The interface's words in the page's language (docs/i18n.md).
 *
 * base.html puts the page's catalogue, `{English: translation}` from
 * `translations/<locale>/LC_MESSAGES/js.po`, as JSON in `<html data-i18n>`; English pages
 * have an empty one. `t()` is also the keyword
 * `make i18n-extract` looks for, so its first argument must be a plain string literal.
 *
 * @module lib/i18n
 */

/** @type {Record<string, string>} */
const MESSAGES = readMessages();

/** @returns {Record<string, string>} */
function readMessages() {
  const json = typeof document === 'undefined' ? undefined : document.documentElement.dataset.i18n;
  if (!json) return {};
  try {
    const messages = JSON.parse(json);
    return messages && typeof messages === 'object' ? messages : {};
  } catch {
    return {};
  }
}

/**
 * The translation of `msgid`, with `{name}` placeholders replaced from `params`.
 * @param {string} msgid the English text, as written in the source
 * @param {Record<string, string | number>} [params]
 * @returns {string}
 */
export function t(msgid, params = {}) {
  const text = MESSAGES[msgid] || msgid;
  return text.replace(/\{(\w+)\}/g, (placeholder, name) =>
    Object.hasOwn(params, name) ? String(params[name]) : placeholder,
  );
}
