/**
 * Adjudication page: every annotator's spans per paragraph, the candidates they form, and
 * a decision per candidate (Accept / Reject / Merge) or a span of the researcher's own.
 *
 * Each decision is one POST with a client UUID, queued in localStorage (lib/sync-queue's
 * SyncQueue) and retried until the server acknowledges it, so nothing decided is lost;
 * the server answers a replay with what it stored. The page is rebuilt from
 * GET state after each acknowledgement, which is also how a reload resumes.
 * Text from documents and workers is only ever set with textContent.
 *
 * @module adjudicate/adjudicate
 */

import { rangeToSpan } from '../lib/anchoring.mjs';
import { pageCsrfToken, requestJson } from '../lib/http.mjs';
import { SyncQueue } from '../lib/sync-queue.mjs';
import { renderParagraph } from '../lib/highlight.mjs';
import { button, element } from '../lib/dom.mjs';
import { ownSpanForm, ownSpans, quote, showPreview, togglePaired } from './own-span.mjs';

/** Lane colours: base.css's --lane-1 to --lane-6, one per annotator, again after six. */
const LANES = 6;
const DECIDED_LABELS = { accept: 'Accepted', reject: 'Rejected', merge: 'Merged', own: 'Own span' };

export default class Adjudicate {
  /** @param {HTMLElement} $root */
  constructor($root) {
    this.$root = $root;
    this.stateUrl = $root.dataset.stateUrl ?? '';
    this.decisionsUrl = $root.dataset.decisionsUrl ?? '';
    this.$status = /** @type {HTMLElement} */ ($root.querySelector('[data-js="status"]'));
    this.$legend = /** @type {HTMLElement} */ ($root.querySelector('[data-js="legend"]'));
    this.$paragraphs = /** @type {HTMLElement} */ ($root.querySelector('[data-js="paragraphs"]'));
    const csrfToken = pageCsrfToken();
    /** @type {any} */
    this.state = null;
    /** The own-span form that a mouse selection fills. */
    this.activeForm = /** @type {HTMLFormElement | null} */ (null);
    this.queue = new SyncQueue({ storageKey: `adjudicate:${this.decisionsUrl}`, csrfToken });
    // Every listener this page adds goes with this controller (destroy()).
    this.listeners = new AbortController();
    const { signal } = this.listeners;
    this.queue.addEventListener('change', (/** @type {any} */ event) => this.showQueue(event.detail), { signal });
    this.queue.addEventListener('acknowledged', () => this.load(), { signal });
    this.queue.addEventListener(
      'rejected',
      (/** @type {any} */ event) => this.say(`Not saved: ${event.detail.error.message}`, true),
      { signal },
    );
    $root.addEventListener('click', (event) => this.click(event), { signal });
    $root.addEventListener('submit', (event) => this.submit(event), { signal });
    $root.addEventListener('input', (event) => this.input(event), { signal });
    $root.addEventListener('change', (event) => this.input(event), { signal });
    $root.addEventListener('mouseup', () => this.selected(), { signal });
    $root.addEventListener('keyup', () => this.selected(), { signal });
    this.load();
    this.queue.flush();
  }

  destroy() {
    this.listeners.abort();
    this.queue.destroy();
  }

  /**
   * @param {string} message
   * @param {boolean} [error]
   */
  say(message, error = false) {
    this.$status.textContent = message;
    this.$status.classList.toggle('is-error', error);
  }

  /** @param {{pending: number, offline: boolean}} detail */
  showQueue(detail) {
    if (detail.pending === 0) return;
    this.say(
      detail.offline
        ? `Offline: ${detail.pending} decision(s) kept in this browser, sent when back online.`
        : `Saving ${detail.pending} decision(s)…`,
    );
  }

  async load() {
    try {
      this.state = await requestJson(this.stateUrl);
    } catch (error) {
      this.say(`Could not load the document: ${/** @type {Error} */ (error).message}`, true);
      return;
    }
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement.id : '';
    this.render();
    if (focused) document.getElementById(focused)?.focus();
    if (this.queue.pending === 0) {
      const decided = this.state.decisions.length;
      this.say(`All decisions saved (${decided} current, ${this.state.history} in the history).`);
    }
  }

  /** @returns {Map<string, any>} */
  decisions() {
    return new Map(this.state.decisions.map((/** @type {any} */ d) => [d.candidate, d]));
  }

  /** @param {string} key */
  categoryName(key) {
    return this.state.categories.find((/** @type {any} */ c) => c.key === key)?.name ?? key;
  }

  /**
   * A severity's name ("Major"), or the key when the taxonomy no longer has it.
   * @param {string} key
   */
  severityName(key) {
    return this.state.severities?.find((/** @type {any} */ s) => s.key === key)?.name ?? key;
  }

  /**
   * ", Major" after a category, when there is a severity.
   * @param {string | null | undefined} key
   */
  severitySuffix(key) {
    return key ? `, ${this.severityName(key)}` : '';
  }

  /** @param {string} key */
  category(key) {
    return this.state.categories.find((/** @type {any} */ c) => c.key === key);
  }

  render() {
    const { annotators, document: doc, candidates } = this.state;
    const colors = new Map(annotators.map((/** @type {string} */ a, /** @type {number} */ i) => [a, `var(--lane-${(i % LANES) + 1})`]));
    this.$legend.replaceChildren(
      ...annotators.map((/** @type {string} */ name) => {
        const $item = element('li', 'adjudicate__legend-item', name);
        $item.style.setProperty('--lane-color', /** @type {string} */ (colors.get(name)));
        return $item;
      }),
    );
    const decisions = this.decisions();
    this.$paragraphs.replaceChildren(
      ...doc.paragraphs.map((/** @type {any} */ paragraph) =>
        this.paragraphSection(paragraph, annotators, colors, candidates, decisions),
      ),
    );
  }

  /**
   * The document's language and direction on a paragraph's text (an Arabic paragraph
   * opening with a Latin name stays right to left); without a language, dir="auto":
   * each paragraph is laid out by its own first strong character.
   * @param {HTMLElement} $text
   */
  setLanguage($text) {
    $text.dir = this.state.document.direction ?? 'auto';
    if (this.state.document.language) $text.lang = this.state.document.language;
  }

  /**
   * @param {{paragraph_id: number, text: string}} paragraph
   * @param {string[]} annotators
   * @param {Map<string, string>} colors
   * @param {any[]} candidates
   * @param {Map<string, any>} decisions
   */
  paragraphSection(paragraph, annotators, colors, candidates, decisions) {
    const n = paragraph.paragraph_id;
    const $section = element('section', 'panel adj-paragraph');
    const headingId = `adj-p${n}-heading`;
    $section.setAttribute('aria-labelledby', headingId);
    const $heading = element('h2', 'adj-paragraph__heading', `Paragraph ${n + 1}`);
    $heading.id = headingId;
    // The researcher's current gold spans on the paragraph itself.
    const $text = element('p', 'adj-paragraph__text');
    $text.dataset.paragraph = String(n);
    this.setLanguage($text);
    const gold = [...decisions.values()].filter((d) => d.result);
    renderParagraph(
      $text,
      paragraph.text,
      gold.flatMap((d) => this.goldHighlights(d, n)),
    );
    const $lanes = element('div', 'adj-lanes');
    const marks = candidates.flatMap((c) => c.marks);
    for (const annotator of annotators) {
      const $lane = element('div', 'adj-lane');
      const color = /** @type {string} */ (colors.get(annotator));
      $lane.style.setProperty('--lane-color', color);
      const $name = element('span', 'adj-lane__name', annotator);
      const $laneText = element('p', 'adj-lane__text');
      this.setLanguage($laneText);
      const own = marks.filter((m) => m.annotator === annotator);
      const highlights = own.flatMap((/** @type {any} */ m, /** @type {number} */ i) => [
        ...(m.span.paragraph_id === n
          ? [{ id: `m${m.annotation_id}`, start: m.span.start, end: m.span.end, color, title: this.categoryName(m.category) }]
          : []),
        ...(m.paired_span?.paragraph_id === n
          ? [{ id: `p${m.annotation_id}-${i}`, start: m.paired_span.start, end: m.paired_span.end, color, className: 'adj-hl--paired', title: `${this.categoryName(m.category)} (second span)` }]
          : []),
      ]);
      renderParagraph($laneText, paragraph.text, highlights);
      $lane.append($name, $laneText);
      $lanes.append($lane);
    }
    const $candidatesHeading = element('h3', 'adj-paragraph__subheading', 'Candidates');
    const $list = element('ol', 'adj-candidates');
    const here = candidates.filter((c) => c.paragraph_id === n);
    here.forEach((candidate, index) => $list.append(this.candidateItem(candidate, decisions.get(candidate.key), `${n}-${index}`)));
    const keys = new Set(candidates.map((c) => c.key));
    [...decisions.values()]
      .filter((d) => !keys.has(d.candidate) && d.result && d.paragraph_id === n)
      .forEach((d, index) => $list.append(this.ownItem(d, `${n}-own-${index}`)));
    if (!$list.children.length) $list.append(element('li', 'muted', 'No candidates in this paragraph.'));
    $section.append($heading, $text, $lanes, $candidatesHeading, $list, this.ownForm(n));
    return $section;
  }

  /**
   * @param {any} decision
   * @param {number} n
   */
  goldHighlights(decision, n) {
    const result = decision.result;
    const color = this.category(result.category)?.color ?? 'var(--category-missing)';
    const title = `Gold: ${this.categoryName(result.category)}`;
    return [
      ...(result.span.paragraph_id === n ? [{ id: `g-${decision.id}`, start: result.span.start, end: result.span.end, color, className: 'adj-hl--gold', title }] : []),
      ...(result.paired_span?.paragraph_id === n ? [{ id: `gp-${decision.id}`, start: result.paired_span.start, end: result.paired_span.end, color, className: 'adj-hl--gold adj-hl--paired', title }] : []),
    ];
  }

  /**
   * @param {any} decision
   * @returns {HTMLElement}
   */
  decisionLine(decision) {
    if (!decision) return element('p', 'candidate__state', 'Undecided');
    const label = DECIDED_LABELS[/** @type {keyof typeof DECIDED_LABELS} */ (decision.decision)];
    const result = decision.result;
    const text = result
      ? `${label}: ${quote(result.span)}${result.paired_span ? ` with ${quote(result.paired_span)}` : ''} as ${this.categoryName(result.category)}${this.severitySuffix(result.severity)} (by ${decision.decided_by})`
      : `${label} (by ${decision.decided_by})`;
    const $line = element('p', `candidate__state candidate__state--${decision.decision}`, text);
    return $line;
  }

  /**
   * @param {any} candidate
   * @param {any} decision
   * @param {string} id
   */
  candidateItem(candidate, decision, id) {
    const $item = element('li', 'candidate');
    $item.dataset.key = candidate.key;
    const $article = element('article', 'candidate__body');
    const titleId = `cand-${id}-title`;
    $article.setAttribute('aria-labelledby', titleId);
    const $title = element('h4', 'candidate__title', `${this.categoryName(candidate.category)}${this.severitySuffix(candidate.proposal.severity)}: ${quote(candidate.proposal.span)}`);
    $title.id = titleId;
    const $marks = element('ul', 'candidate__marks');
    for (const mark of candidate.marks) {
      const $mark = element('li', 'candidate__mark');
      $mark.append(element('strong', '', mark.annotator), ` marked ${quote(mark.span)}`);
      if (mark.paired_span) $mark.append(` with ${quote(mark.paired_span)}`);
      if (mark.severity) $mark.append(`, severity ${this.severityName(mark.severity)}`);
      if (mark.comment) $mark.append(element('span', 'candidate__comment', ` — comment: ${mark.comment}`));
      $marks.append($mark);
    }
    const $actions = element('div', 'candidate__actions');
    const action = (/** @type {string} */ name, /** @type {string} */ label, /** @type {string} */ style) =>
      button(label, `button button--small ${style}`, { action: name, id: `cand-${id}-${name}`, describedBy: titleId });
    const $merge = action('merge-open', 'Merge…', 'button--secondary');
    $merge.setAttribute('aria-expanded', 'false');
    $merge.setAttribute('aria-controls', `cand-${id}-merge`);
    $actions.append(action('accept', 'Accept', 'button--primary'), action('reject', 'Reject', 'button--danger'), $merge);
    $article.append($title, this.decisionLine(decision), $marks, $actions, this.mergeForm(candidate, id));
    $item.append($article);
    return $item;
  }

  /**
   * @param {any} candidate
   * @param {string} id
   */
  mergeForm(candidate, id) {
    const $form = element('form', 'candidate__merge');
    $form.id = `cand-${id}-merge`;
    $form.hidden = true;
    $form.dataset.form = 'merge';
    const $fieldset = element('fieldset', 'candidate__boundary');
    $fieldset.append(element('legend', '', 'Boundary'));
    const options = [
      { value: 'union', label: `Union of all spans: ${quote(candidate.union.span)}` },
      ...candidate.marks.map((/** @type {any} */ m) => ({ value: m.annotator, label: `${m.annotator}'s span: ${quote(m.span)}` })),
    ];
    options.forEach((option, index) => {
      const $label = element('label', 'field--check');
      const $radio = element('input');
      $radio.type = 'radio';
      $radio.name = 'boundary';
      $radio.value = option.value;
      $radio.checked = index === 0;
      $label.append($radio, ` ${option.label}`);
      $fieldset.append($label);
    });
    const selectId = `cand-${id}-category`;
    const $label = element('label', 'label', 'Category');
    $label.setAttribute('for', selectId);
    const $select = this.categorySelect(selectId, candidate.category, candidate.marks.some((/** @type {any} */ m) => m.paired_span));
    const $save = button('Save merge', 'button button--primary button--small', { type: 'submit' });
    $form.append($fieldset, $label, $select, ...this.severityField(`cand-${id}-severity`, true), $save);
    return $form;
  }

  /**
   * A labelled Severity select, when the taxonomy has severities (else nothing). With
   * `derived`, a first option leaves it to the marks (the server takes the severity most
   * of them gave, or the chosen boundary's).
   * @param {string} id
   * @param {boolean} derived
   * @returns {HTMLElement[]}
   */
  severityField(id, derived) {
    const severities = this.state.severities ?? [];
    if (!severities.length) return [];
    const $label = element('label', 'label', 'Severity');
    $label.setAttribute('for', id);
    const $select = element('select', 'select');
    $select.id = id;
    $select.name = 'severity';
    const options = [
      ...(derived ? [{ key: '', name: 'As the marks say' }] : []),
      ...severities.map((/** @type {any} */ s) => ({ key: s.key, name: `${s.name} (${s.weight})` })),
    ];
    for (const option of options) {
      const $option = element('option', '', option.name);
      $option.value = option.key;
      $select.append($option);
    }
    return [$label, $select];
  }

  /**
   * @param {string} id
   * @param {string} selected
   * @param {boolean} [pairedAllowed]
   */
  categorySelect(id, selected, pairedAllowed = true) {
    const $select = element('select', 'select');
    $select.id = id;
    $select.name = 'category';
    for (const category of this.state.categories) {
      if (category.type === 'paired' && !pairedAllowed) continue;
      const $option = element('option', '', category.name);
      $option.value = category.key;
      $option.selected = category.key === selected;
      $select.append($option);
    }
    return $select;
  }

  /**
   * An own span (or a decision whose candidate has changed since), with Remove.
   * @param {any} decision
   * @param {string} id
   */
  ownItem(decision, id) {
    const $item = element('li', 'candidate candidate--own');
    $item.dataset.key = decision.candidate;
    const $article = element('article', 'candidate__body');
    const titleId = `cand-${id}-title`;
    $article.setAttribute('aria-labelledby', titleId);
    // A decided candidate that has changed since (a session submitted later) shows here too.
    const kind = decision.decision === 'own' ? 'Own span' : 'Earlier decision';
    const $title = element('h4', 'candidate__title', `${kind}, ${this.categoryName(decision.result.category)}${this.severitySuffix(decision.result.severity)}: ${quote(decision.result.span)}`);
    $title.id = titleId;
    const $remove = button('Remove', 'button button--small button--danger', {
      action: 'reject',
      id: `cand-${id}-reject`,
      describedBy: titleId,
    });
    const $actions = element('div', 'candidate__actions');
    $actions.append($remove);
    $article.append($title, this.decisionLine(decision), $actions);
    $item.append($article);
    return $item;
  }

  /** @param {number} n */
  ownForm(n) {
    const $select = this.categorySelect(`own-${n}-category`, this.state.categories[0]?.key);
    const $form = ownSpanForm(n, $select, this.severityField(`own-${n}-severity`, false));
    togglePaired($form, this.state.categories);
    return $form;
  }

  /** @param {HTMLFormElement} $form */
  preview($form) {
    showPreview($form, this.state.document.paragraphs);
  }

  /** @param {Event} event */
  input(event) {
    const $form = /** @type {HTMLElement} */ (event.target).closest('form');
    if (!($form instanceof HTMLFormElement) || $form.dataset.form !== 'own') return;
    this.activeForm = $form;
    if (/** @type {HTMLElement} */ (event.target).getAttribute('name') === 'category') togglePaired($form, this.state.categories);
    this.preview($form);
  }

  /** A mouse (or keyboard) selection inside a paragraph's text fills an own-span form. */
  selected() {
    const selection = document.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return;
    const range = selection.getRangeAt(0);
    const $paragraph = /** @type {HTMLElement | null} */ (
      (range.commonAncestorContainer instanceof Element ? range.commonAncestorContainer : range.commonAncestorContainer.parentElement)?.closest('.adj-paragraph__text')
    );
    if (!$paragraph || !this.$root.contains($paragraph)) return;
    const span = rangeToSpan(range, $paragraph);
    if (!span) return;
    const n = Number($paragraph.dataset.paragraph);
    const active = this.activeForm;
    const second = active && /** @type {HTMLInputElement} */ (active.elements.namedItem('select_second')).checked;
    const $form = second && active ? active : /** @type {HTMLFormElement} */ (this.$root.querySelector(`#own-${n}`));
    const set = (/** @type {string} */ name, /** @type {number} */ value) => {
      /** @type {HTMLInputElement} */ ($form.elements.namedItem(name)).value = String(value);
    };
    if (second) {
      set('paired_paragraph', n + 1);
      set('paired_start', span.start);
      set('paired_end', span.end);
      /** @type {HTMLInputElement} */ ($form.elements.namedItem('select_second')).checked = false;
    } else {
      set('start', span.start);
      set('end', span.end);
    }
    this.activeForm = $form;
    this.preview($form);
  }

  /** @param {MouseEvent} event */
  click(event) {
    const $button = /** @type {HTMLElement} */ (event.target).closest('button[data-action]');
    if (!($button instanceof HTMLButtonElement)) return;
    const key = /** @type {HTMLElement} */ ($button.closest('[data-key]')).dataset.key ?? '';
    const action = $button.dataset.action;
    if (action === 'merge-open') {
      const $form = /** @type {HTMLElement} */ (document.getElementById($button.getAttribute('aria-controls') ?? ''));
      const open = $form.hidden;
      $form.hidden = !open;
      $button.setAttribute('aria-expanded', String(open));
      if (open) /** @type {HTMLElement} */ ($form.querySelector('input, select'))?.focus();
      return;
    }
    if (action === 'accept' || action === 'reject') this.send({ candidate: key, decision: action });
  }

  /** @param {SubmitEvent} event */
  submit(event) {
    const $form = /** @type {HTMLFormElement} */ (event.target);
    event.preventDefault();
    const data = new FormData($form);
    if ($form.dataset.form === 'merge') {
      const key = /** @type {HTMLElement} */ ($form.closest('[data-key]')).dataset.key ?? '';
      this.send({
        candidate: key,
        decision: 'merge',
        boundary: data.get('boundary'),
        category: data.get('category'),
        severity: data.get('severity') || null,
      });
      return;
    }
    const { span, paired, pairedVisible } = ownSpans($form, this.state.document.paragraphs);
    if (!span || (pairedVisible && !paired)) {
      this.say('Choose the span first (and the second span for a paired category).', true);
      this.preview($form);
      return;
    }
    this.send({ decision: 'own', category: data.get('category'), span, paired_span: paired, severity: data.get('severity') || null });
  }

  /** @param {Record<string, unknown>} body */
  send(body) {
    const id = crypto.randomUUID();
    this.say('Saving…');
    this.queue.enqueue({ kind: 'add', id, method: 'POST', url: this.decisionsUrl, body: { id, ...body } });
  }
}
