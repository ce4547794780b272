"""Unit tests of the pure JS modules, run in Chromium on a static harness page: no app, no
database, no full flow. The page and static/ are served by Playwright's router from the
working tree, so a module is imported exactly as the app serves it; the retry queue's
requests go to a routed fake API whose answers each test chooses.

Covered: annotator/status (the save-status words), annotator/navigation (which buttons
are open), annotator/selection (which selections make a span), annotator/keyboard (the
page's key rules), annotator/wire (the queued writes), annotator/draft (a draft that still
fits), annotator/suggestion-decisions (the decisions on model suggestions), lib/sync-queue
(backoff, coalescing, retry, refusal), lib/anchoring's one UTF-16 conversion, and destroy()
removing a component's listeners. The harness is tests/support/js_harness (fixture
`js_harness`).
"""

from __future__ import annotations

from playwright.sync_api import Page


def run(page: Page, module: str, body: str, arg=None):
    """Import static/js/<module> as `m` in the page and return what `body` returns."""
    return page.evaluate(
        f"async (arg) => {{ const m = await import('/static/js/{module}'); {body} }}",
        arg,
    )


STATUS_CASES = [
    # (state, words, is a problem)
    ({"message": "Loading the next paragraph…"}, "Loading the next paragraph…", False),
    ({"failure": "refused.", "pending": 2}, "Could not save: refused.", True),
    ({"pending": 1, "offline": True, "lastError": "x"}, "Offline — 1 change waiting", True),
    (
        {"pending": 3, "lastError": "Server down."},
        "Could not save: Server down. Retrying — 3 changes waiting",
        True,
    ),
    ({"pending": 3, "lastError": "Server down.", "sending": True}, "Saving…", False),
    ({"pending": 1}, "Saving…", False),
    ({"anythingSaved": True}, "Saved", False),
    ({}, "", False),
]


def test_status_words_follow_the_queue_state(js_harness):
    """annotator/status: every state of the save queue has its words, problems flagged."""
    page, _ = js_harness
    defaults = {
        "message": "",
        "failure": None,
        "pending": 0,
        "offline": False,
        "sending": False,
        "lastError": None,
        "anythingSaved": False,
    }
    states = [{**defaults, **state} for state, _, _ in STATUS_CASES]
    got = run(
        page,
        "annotator/status.mjs",
        "return arg.map((s) => { const t = m.statusText(s); return [t, m.isProblem(t)]; });",
        states,
    )
    assert got == [[words, problem] for _, words, problem in STATUS_CASES]


def test_navigation_opens_the_buttons_the_rules_allow(js_harness):
    """annotator/navigation: Previous, Next and Submit, and where a move may go."""
    page, _ = js_harness
    place = {
        "position": 0,
        "furthest": 0,
        "total": 3,
        "busy": False,
        "readOnly": False,
        "pending": 0,
    }
    got = run(
        page,
        "annotator/navigation.mjs",
        """const p = arg;
        return {
          first: m.navigationState(p),
          last: m.navigationState({ ...p, position: 2, furthest: 2 }),
          lastPending: m.navigationState({ ...p, position: 2, furthest: 2, pending: 1 }),
          busy: m.navigationState({ ...p, position: 1, furthest: 1, busy: true }),
          readOnlyAtFurthest: m.navigationState({ ...p, position: 1, furthest: 1, readOnly: true }),
          moves: [-1, 0, 1, 2, 3].map((t) => m.moveKind(t, { ...p, canReveal: true })),
          readOnlyMove: m.moveKind(1, { ...p, canReveal: false }),
          offline: m.revealMessage(Object.assign(new Error('x'), { offline: true })),
          failed: m.revealMessage(new Error('Nope.')),
        };""",
        place,
    )
    assert got["first"] == {"previous": False, "next": True, "submit": False}
    assert got["last"] == {"previous": True, "next": False, "submit": True}
    assert got["lastPending"]["submit"] is False
    assert got["busy"] == {"previous": False, "next": False, "submit": False}
    assert got["readOnlyAtFurthest"] == {"previous": True, "next": False, "submit": False}
    assert got["moves"] == [None, "shown", "reveal", None, None]
    assert got["readOnlyMove"] is None
    assert got["offline"].startswith("You seem to be offline.")
    assert got["failed"] == "Could not load the next paragraph: Nope."


def test_selection_rules_give_a_span_or_the_reason(js_harness):
    """annotator/selection: one paragraph only; the error in the current one, the paired
    span up to it; offsets in code points."""
    page, _ = js_harness
    got = run(
        page,
        "annotator/selection.mjs",
        """const texts = ['Zoë met 🚢 Łukasz.', 'He waved.', 'Later.'];
        const shown = texts.map((text, i) => {
          const $p = document.createElement('p');
          $p.dataset.paragraph = String(i);
          $p.textContent = text;
          document.body.append($p);
          return $p;
        });
        const range = (a, from, b, to) => {
          const r = document.createRange();
          r.setStart(shown[a].firstChild, from);
          r.setEnd(shown[b].firstChild, to);
          return r;
        };
        return {
          span: m.readSelection(range(0, 11, 0, 17), shown, { position: 0, forPaired: false }),
          blank: m.readSelection(range(0, 3, 0, 4), shown, { position: 0, forPaired: false }),
          two: m.readSelection(range(0, 0, 1, 2), shown, { position: 1, forPaired: false }),
          notCurrent: m.readSelection(range(0, 0, 0, 3), shown, { position: 1, forPaired: false }),
          pairedBefore: m.readSelection(range(0, 0, 0, 3), shown, { position: 1, forPaired: true }),
          pairedAhead: m.readSelection(range(2, 0, 2, 5), shown, { position: 1, forPaired: true }),
          refusals: m.REFUSALS,
        };""",
    )
    assert got["span"] == {"span": {"paragraph_id": 0, "start": 10, "end": 16, "text": "Łukasz"}}
    assert got["blank"] is None
    assert got["two"] == {"refusal": got["refusals"]["twoParagraphs"]}
    assert got["notCurrent"] == {"refusal": got["refusals"]["notCurrent"]}
    assert got["pairedBefore"] == {"span": {"paragraph_id": 0, "start": 0, "end": 3, "text": "Zoë"}}
    assert got["pairedAhead"] == {"refusal": got["refusals"]["pairedAhead"]}


def test_page_keys_map_to_actions(js_harness):
    """annotator/keyboard: Enter adds, Escape closes the innermost question, shortcuts choose."""
    page, _ = js_harness
    got = run(
        page,
        "annotator/keyboard.mjs",
        """const $input = document.createElement('textarea');
        const $button = document.createElement('button');
        const $row = document.createElement('tr');
        $row.className = 'js-annotation-row is-confirming';
        $row.dataset.annotation = 'a1';
        const $inRow = document.createElement('button');
        $row.append($inRow);
        const page = { shortcuts: new Map([['1', 'new-person']]), complete: true, asking: false };
        const key = (key, target = document.body, extra = {}) =>
          m.pageKeyAction({ key, target, ...extra }, page);
        return [
          key('Enter'),
          m.pageKeyAction({ key: 'Enter', target: document.body }, { ...page, complete: false }),
          key('Enter', $button),
          key('Escape', $inRow),
          m.pageKeyAction({ key: 'Escape', target: document.body }, { ...page, asking: true }),
          key('Escape'),
          key('1'),
          key('1', $input),
          key('1', document.body, { ctrlKey: true }),
          key('9'),
        ];""",
    )
    assert got == [
        {"action": "add"},
        None,
        None,
        {"action": "cancel-remove", "row": "a1"},
        {"action": "cancel-submit"},
        {"action": "clear"},
        {"action": "choose", "category": "new-person"},
        None,
        None,
        None,
    ]


def test_wire_operations_and_fitting_drafts(js_harness):
    """annotator/wire builds the queued writes; annotator/draft keeps only spans that fit."""
    page, _ = js_harness
    got = run(
        page,
        "annotator/wire.mjs",
        """const { fittingDraft } = await import('/static/js/annotator/draft.mjs');
        const span = { paragraph_id: 1, start: 0, end: 2, text: 'He' };
        const onPage = (s) => ({ toString: () => (s.paragraph_id <= 1 ? 'He' : '') });
        return {
          add: m.addOperation('/api/s/t/annotations', {
            id: 'a/1', category: 'c', span, paired_span: null, comment: null,
          }),
          remove: m.removeOperation('/api/s/t/annotations', 'a/1'),
          position: m.positionOperation('/api/s/t/position', m.positionBody(2, 7)),
          here: fittingDraft({ span, paired: span, category: 'c', comment: 'x' }, 1, onPage),
          moved: fittingDraft({ span, paired: span, category: 'c', comment: '' }, 2, onPage),
        };""",
    )
    assert (
        got["add"]["method"] == "POST" and got["add"]["kind"] == "add" and got["add"]["id"] == "a/1"
    )
    assert got["remove"] == {
        "kind": "remove",
        "id": "a/1",
        "method": "DELETE",
        "url": "/api/s/t/annotations/a%2F1",
    }
    assert got["position"] == {
        "kind": "position",
        "coalesce": "position",
        "method": "PUT",
        "url": "/api/s/t/position",
        "body": {"active_seconds": 7, "paragraph_id": 2},
    }
    assert got["here"]["span"] and got["here"]["paired"] and got["here"]["comment"] == "x"
    assert got["moved"]["span"] is None and got["moved"]["paired"] == got["here"]["paired"]


def test_backoff_doubles_up_to_the_limit_with_jitter(js_harness):
    """lib/sync-queue's backoffDelay: 1 s doubling, at most 30 s, spread ±20%."""
    page, _ = js_harness
    got = run(
        page,
        "lib/sync-queue.mjs",
        """return [0, 0.5, 1].map((jitter) =>
          [0, 1, 2, 3, 4, 5, 6, 10].map((attempt) =>
            Math.round(m.backoffDelay(attempt, { jitter }))));""",
    )
    steps = [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
    assert got == [[round(s * 0.8) for s in steps], steps, [round(s * 1.2) for s in steps]]


def test_coalescing_keeps_only_the_latest_but_never_the_one_in_flight(js_harness):
    """lib/sync-queue: a write with a coalescing key replaces the queued one of that key."""
    page, _ = js_harness
    got = run(
        page,
        "lib/sync-queue.mjs",
        """const op = (key, coalesce) =>
          ({ key, method: 'PUT', url: '/u', ...(coalesce ? { coalesce } : {}) });
        const inFlight = op('p1', 'pos');
        let queue = [inFlight, op('a1'), op('p2', 'pos')];
        queue = m.appendCoalesced(queue, op('p3', 'pos'), inFlight);
        const appended = queue.map((o) => o.key);
        queue = m.appendCoalesced(queue, op('a2'), inFlight);
        const dropped = m.withoutCoalesced(queue, 'pos').map((o) => o.key);
        return { appended, plain: queue.map((o) => o.key), dropped };""",
    )
    assert got == {
        "appended": ["p1", "a1", "p3"],
        "plain": ["p1", "a1", "p3", "a2"],
        "dropped": ["a1", "a2"],
    }


QUEUE_RUN = """
const queue = new m.SyncQueue(
  { storageKey: 'units:queue', csrfToken: 'tok', baseDelay: 20, maxDelay: 40 });
const events = [];
queue.addEventListener('acknowledged', (e) => events.push(['ok', e.detail.operation.id]));
queue.addEventListener('rejected', (e) => events.push(
  ['refused', e.detail.operation.id, e.detail.error.status, e.detail.error.message]));
const stored = [];
for (const [id, coalesce] of arg) {
  const extra = coalesce ? { coalesce } : {};
  queue.enqueue({ kind: 'x', id, method: 'POST', url: `/api/${id}`, body: { id }, ...extra });
  stored.push(JSON.parse(localStorage.getItem('units:queue') ?? '[]').length);
}
const deadline = performance.now() + 5000;
while (queue.pending && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
queue.destroy();
return { events, stored, pending: queue.pending, left: localStorage.getItem('units:queue') };
"""


def test_queue_retries_transient_failures_and_drops_refusals(js_harness):
    """lib/sync-queue against a routed API: 503 and 429 are retried after a backoff, in
    order; a 422 is refused for good and the queue goes on; storage empties at the end."""
    page, api = js_harness
    api.script = [503, 429, 200, 422, 200]
    got = run(page, "lib/sync-queue.mjs", QUEUE_RUN, [["a", None], ["b", None], ["c", None]])
    assert got["events"] == [["ok", "a"], ["refused", "b", 422, "m422"], ["ok", "c"]]
    assert [seen["path"] for seen in api.seen] == ["/api/a", "/api/a", "/api/a", "/api/b", "/api/c"]
    assert {seen["csrf"] for seen in api.seen} == {"tok"}
    assert got["pending"] == 0 and got["left"] is None
    assert got["stored"][0] >= 1  # written to storage before it was sent


def test_queue_sends_only_the_latest_coalesced_write(js_harness):
    """lib/sync-queue: while the first write waits on a retry, later writes of the same
    coalescing key replace each other; the first, already in flight, is sent as it was."""
    page, api = js_harness
    api.script = [503]
    got = run(
        page,
        "lib/sync-queue.mjs",
        QUEUE_RUN,
        [["p1", "pos"], ["p2", "pos"], ["p3", "pos"], ["a", None]],
    )
    assert [seen["path"] for seen in api.seen] == ["/api/p1", "/api/p1", "/api/p3", "/api/a"]
    assert got["events"] == [["ok", "p1"], ["ok", "p3"], ["ok", "a"]]


def test_highlight_and_ranges_share_one_utf16_conversion(js_harness):
    """lib/anchoring's utf16Offsets converts code points for highlights and ranges alike."""
    page, _ = js_harness
    text = "a🚢b𝔘c"
    got = run(
        page,
        "lib/anchoring.mjs",
        """const text = arg;
        const units = m.utf16Offsets(text, [0, 1, 2, 3, 4, 5, 9]);
        const $p = document.createElement('p');
        $p.textContent = text;
        document.body.append($p);
        return {
          units: [...units.entries()],
          one: m.codePointToUtf16(text, 3),
          range: m.spanToRange($p, { start: 1, end: 4 }).toString(),
        };""",
        text,
    )
    assert got["units"] == [[0, 0], [1, 1], [2, 3], [3, 4], [4, 6], [5, 7], [9, 7]]
    assert got["one"] == 4
    assert got["range"] == text[1:4]


def test_destroy_removes_every_listener_a_component_added(js_harness):
    """One AbortController per component: after destroy() no event reaches it."""
    page, _ = js_harness
    got = run(
        page,
        "annotator/keyboard.mjs",
        """const { SyncQueue } = await import('/static/js/lib/sync-queue.mjs');
        const $host = document.createElement('div');
        document.body.append($host);
        const keys = new m.KeyboardSelection({
          $host, shown: () => [], current: () => undefined, onTake: () => {}, enabled: () => true,
        });
        const queue = new SyncQueue({ storageKey: 'units:destroy', csrfToken: '' });
        const calls = { keys: 0, online: 0 };
        keys.handleKey = () => { calls.keys += 1; };
        queue.flush = () => { calls.online += 1; };
        const fire = () => {
          $host.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight' }));
          window.dispatchEvent(new Event('online'));
        };
        fire();
        const before = { ...calls };
        keys.destroy();
        queue.destroy();
        fire();
        return { before, after: calls };""",
    )
    assert got == {"before": {"keys": 1, "online": 1}, "after": {"keys": 1, "online": 1}}


# annotator/suggestion-decisions: three suggestions of a session (the server knew s2 was
# rejected), paragraphs 0 and 1, and the session's live annotations in a Map (the store's).
DECISIONS = """
const span = (paragraph_id, start, end, text) => ({ paragraph_id, start, end, text });
const suggestion = (id, category, s, extra = {}) => ({
  id, category, labels: [category], span: s, paired_span: null, question: null, comment: null,
  ...extra,
});
const suggestions = [
  suggestion('s2', 'repetition', span(0, 10, 14, 'Anna'), { decision: 'rejected' }),
  suggestion('s1', 'new-person', span(0, 0, 3, 'Bob')),
  suggestion('s3', 'missing-info', span(1, 4, 8, 'mill')),
];
const annotations = new Map();
const decisions = (options = {}) => new m.SuggestionDecisions({
  suggestions, annotations, writable: true, url: '/api/sessions/t/suggestions', ...options,
});
const state = (d) => Object.fromEntries(suggestions.map((s) => [s.id, d.decision(s)]));
const ids = (list) => list.map((s) => s.id);
"""


def run_decisions(page: Page, body: str):
    """Run `body` after DECISIONS, with annotator/suggestion-decisions as `m`."""
    return run(page, "annotator/suggestion-decisions.mjs", DECISIONS + body)


def test_suggestion_decisions_come_from_annotations_and_rejections(js_harness):
    """annotator/suggestion-decisions: a decision is derived (a live annotation made from
    the suggestion, else a rejection not undone); Accept, Reject and Undo change it, an
    undecided suggestion blocks a move past its paragraph; read-only pages show none."""
    page, _ = js_harness
    got = run_decisions(
        page,
        """const d = decisions();
        const seen = { start: state(d), shown: ids(d.shown()), outlined: ids(d.outlined(0)),
          outlinedElsewhere: ids(d.outlined(1)), undecided: ids(d.undecided(0, 2)),
          blocks: [d.blocksMove(0, 1), d.blocksMove(0, 0), d.blocksMove(1, 0)] };
        const accepted = d.accept('s1');
        annotations.set('a1', { id: 'a1', ...accepted.add });
        seen.accepted = [accepted, state(d), d.accept('s1'), d.edit('s1'), d.outlined(0).length];
        annotations.set('a1', { ...annotations.get('a1'), span: span(0, 0, 2, 'Bo') });
        seen.changedSpan = d.decision(suggestions[1]);
        annotations.set('a1',
          { ...annotations.get('a1'), span: suggestions[1].span, origin: 'suggestion-edited' });
        seen.serverOrigin = d.decision(suggestions[1]);
        annotations.delete('a1');
        seen.removed = d.decision(suggestions[1]);
        seen.rejected = [d.reject('s1', 'c1'), d.decision(suggestions[1]), d.reject('s1', 'c2')];
        seen.blocksAfterDeciding = d.blocksMove(0, 1);
        seen.undone = [d.undo('s1'), d.decision(suggestions[1]), d.undo('s1')];
        const readOnly = decisions({ writable: false });
        seen.readOnly = [ids(readOnly.shown()), readOnly.outlined(0), readOnly.blocksMove(0, 2)];
        seen.noUrl = decisions({ url: null }).reject('s1', 'c3');
        return seen;""",
    )
    assert got["start"] == {"s2": "rejected", "s1": None, "s3": None}
    assert got["shown"] == ["s1", "s2"]  # in reading order
    assert got["outlined"] == ["s1"] and got["outlinedElsewhere"] == []
    assert got["undecided"] == ["s1", "s3"]
    assert got["blocks"] == [True, False, False]
    fields, after, again, edit, outlined = got["accepted"]
    assert fields == {
        "add": {
            "category": "new-person",
            "span": {"paragraph_id": 0, "start": 0, "end": 3, "text": "Bob"},
            "paired_span": None,
            "comment": None,
            "suggestion_id": "s1",
        }
    }
    assert after["s1"] == "accepted" and again is None and edit is False and outlined == 0
    assert got["changedSpan"] == "edited" and got["serverOrigin"] == "edited"
    assert got["removed"] is None
    operation, decision, twice = got["rejected"]
    assert operation == {
        "kind": "reject",
        "id": "c1",
        "suggestion": "s1",
        "method": "POST",
        "url": "/api/sessions/t/suggestions/s1/rejection",
        "body": {"id": "c1"},
    }
    assert decision == "rejected" and twice is None
    assert got["blocksAfterDeciding"] is False
    assert got["undone"] == [
        {
            "kind": "unreject",
            "suggestion": "s1",
            "method": "DELETE",
            "url": "/api/sessions/t/suggestions/s1/rejection",
        },
        None,
        None,
    ]
    assert got["readOnly"] == [[], [], False]
    assert got["noUrl"] is None


def test_suggestion_decisions_survive_a_reload(js_harness):
    """What a reload keeps: the server's rejections (seen once: a refresh does not undo an
    Undo), the Rejects and Undos still queued, an Edit left unfinished in the Current
    Paragraph; a move drops the Edit; a refused Reject is taken back."""
    page, _ = js_harness
    got = run_decisions(
        page,
        """const d = decisions();
        d.replay([
          { kind: 'add', id: 'a9', method: 'POST', url: '/x' },
          { kind: 'reject', id: 'c1', suggestion: 's1', method: 'POST', url: '/x' },
          { kind: 'unreject', suggestion: 's2', method: 'DELETE', url: '/x' },
        ]);
        const seen = { replayed: state(d), client: d.rejected.get('s1') };
        d.merge(suggestions);
        seen.refreshed = state(d);
        seen.resumeElsewhere = d.resumeEditing('s3');
        d.moveTo(1);
        seen.resumed = [d.resumeEditing('s3'), d.editing];
        seen.taken = [d.takeEditing(), d.editing, d.takeEditing()];
        d.edit('s3');
        seen.moved = [d.moveTo(0), d.editing, d.position];
        seen.refused = [d.refused({ kind: 'reject', suggestion: 's1' }), d.decision(suggestions[1]),
          d.refused({ kind: 'add', id: 'a9' })];
        return seen;""",
    )
    assert got["replayed"] == {"s2": None, "s1": "rejected", "s3": None}
    assert got["client"] == "c1"
    assert got["refreshed"] == {"s2": None, "s1": "rejected", "s3": None}
    assert got["resumeElsewhere"] is False
    assert got["resumed"] == [True, "s3"]
    assert got["taken"] == [{"suggestion_id": "s3"}, None, {}]
    assert got["moved"] == [1, None, 0]
    assert got["refused"] == [True, None, False]


def test_accept_asks_for_a_severity_first(js_harness):
    """With severities an Accept asks first; only a key the suggestion's category offers
    answers it, for the suggestion asking; Cancel or a move drops the question."""
    page, _ = js_harness
    got = run_decisions(
        page,
        """const d = decisions({
          severities: (category) => (category === 'new-person' ? ['minor', 'major'] : ['minor']),
        });
        const seen = { asked: [d.accept('s1'), d.asking] };
        seen.notOffered = [d.acceptWithSeverity(null, 'critical'), d.asking];
        seen.notAsking = d.acceptWithSeverity('s3', 'minor');
        seen.answered = [d.acceptWithSeverity(null, 'major'), d.asking];
        d.accept('s1');
        d.cancelAsking();
        seen.cancelled = [d.asking, d.acceptWithSeverity('s1', 'minor')];
        d.accept('s1');
        d.moveTo(0);
        seen.moved = d.asking;
        return seen;""",
    )
    assert got["asked"] == [{"ask": True}, "s1"]
    assert got["notOffered"] == [None, "s1"]
    assert got["notAsking"] is None
    fields, asking = got["answered"]
    assert fields["severity"] == "major" and fields["suggestion_id"] == "s1" and asking is None
    assert got["cancelled"] == [None, None]
    assert got["moved"] is None
