/**
 * Entry point of every page: starts one component per `[data-module]` root.
 *
 * `data-module="NAME"` loads the module registered below (or, by convention,
 * `./NAME/NAME.mjs`) and constructs its default export: a class taking the root element,
 * with a `destroy()` method that removes everything it added. Modules are loaded on demand,
 * so a page pays only for the components it has.
 *
 * @module main
 */

/** @type {Record<string, () => Promise<{default: new (root: HTMLElement) => {destroy(): void}}>>} */
const MODULES = {
  annotator: () => import('./annotator/annotator.mjs'),
  // The console's modules stay English (docs/i18n.md): they live in research/.
  'upload-progress': () => import('./research/upload-progress.mjs'),
  analyses: () => import('./research/analyses.mjs'),
};

const NAME = /^[a-z][a-z0-9-]*$/;

/** @type {WeakMap<HTMLElement, {destroy(): void}>} */
const started = new WeakMap();

/**
 * Start every component under `scope` that is not started yet.
 * @param {ParentNode} [scope]
 * @returns {Promise<void>}
 */
export async function initAll(scope = document) {
  const roots = /** @type {HTMLElement[]} */ ([...scope.querySelectorAll('[data-module]')]);
  await Promise.all(
    roots.map(async ($root) => {
      const name = $root.dataset.module ?? '';
      if (started.has($root) || !NAME.test(name)) return;
      try {
        const load = MODULES[name] ?? (() => import(`./${name}/${name}.mjs`));
        const { default: Component } = await load();
        started.set($root, new Component($root));
      } catch (error) {
        // One broken component must not stop the others.
        console.error(`Could not start component "${name}"`, error);
      }
    }),
  );
}

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', () => initAll(), { once: true });
} else {
  initAll();
}
