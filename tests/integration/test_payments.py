"""`flask payments --platform prolific|mturk --output DIR` and the researcher's downloads
(issue 33, point 4), on SQLite and PostgreSQL: in a simulated study (tests/support/
payments_study.py) every worker, annotator or validator, is under the decision of their
outcome (completed approve, failed_checks review, failed_training screen out, no_consent
return, flagged by the checks review, still working open) with the bonus of the study's
rule (0.10 per validated annotation, 0.50 per planted error found, at most 1.00 USD)."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest
from sqlalchemy import select

from app import create_app
from app.core.extensions import db
from app.models import Annotator, ValidationRound, ValidationSession
from tests.support.apps import ROOT, dispose_engines, make_test_config
from tests.support.interop_app import run
from tests.support.payments_study import bonus_taxonomy, seed_payments_study
from tests.support.taxonomies import use_taxonomy

PROLIFIC = {  # worker: (role, decision, bonus, bonus paid now)
    "PGOOD1": ("annotator", "approve", "1.00", "1.00"),  # 3 validated + 2 planted: capped
    "PGOOD2": ("annotator", "approve", "0.60", "0.60"),  # 1 validated (partial) + 1 planted
    "PLAZY": ("annotator", "review", "0.10", "0.00"),  # completed, flagged by the check
    "PFAILCHK": ("annotator", "review", "0.00", "0.00"),
    "PTRAIN": ("annotator", "screen_out", "0.00", "0.00"),
    "PNOCONS": ("annotator", "return", "0.00", "0.00"),
    "POPEN": ("annotator", "open", "0.00", "0.00"),
    "'=HYPERLINK(1)": ("annotator", "review", "0.00", "0.00"),  # not a plain id: by hand
    "PVAL1": ("validator", "approve", "0.00", "0.00"),
    "PVAL2": ("validator", "open", "0.00", "0.00"),
}
MTURK = {  # assignment: (worker, decision, bonus paid now)
    "A1": ("MGOOD", "approve", "0.10"),  # 1 validated (the other was disagreed with)
    "A2": ("MGOOD", "approve", "0.50"),  # 1 planted found on the check
    "A3": ("MTRAIN", "screen_out", "0.00"),
    "A4": ("MFAILCHK", "review", "0.00"),
    "A5": ("MNOCONS", "return", "0.00"),
}


@pytest.fixture
def app(database_uri, tmp_path):
    """The default taxonomy with a bonus rule, and the simulated study."""
    taxonomy = bonus_taxonomy(tmp_path, ROOT / "config" / "taxonomy.yaml")
    application = create_app(make_test_config(database_uri, TAXONOMY_PATH=taxonomy))
    with application.app_context():
        seed_payments_study()
        yield application
        db.session.remove()
        dispose_engines()


def decisions(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_prolific_sheets_list_every_worker_under_the_right_outcome_and_bonus(app, runner, tmp_path):
    result = run(runner, "payments", "--platform", "prolific", "--output", tmp_path / "pay")
    assert "10 prolific workers: 3 approve, 3 review, 1 screen out, 1 return, 2 open" in (
        result.output
    )
    pay = tmp_path / "pay"
    assert (pay / "prolific-bulk-approve.txt").read_text() == "PGOOD1\nPGOOD2\nPVAL1\n"
    assert (pay / "prolific-bulk-bonus.txt").read_text() == "PGOOD1,1.00\nPGOOD2,0.60\n"
    rows = decisions((pay / "decisions.csv").read_text())
    assert {r["worker_id"]: (r["role"], r["decision"], r["bonus"], r["bonus_paid_now"])
            for r in rows} == PROLIFIC  # fmt: skip
    assert all(r["currency"] == "USD" for r in rows)
    lazy = next(r for r in rows if r["worker_id"] == "PLAZY")
    assert (lazy["flagged"], lazy["validated"], lazy["planted_found"]) == ("true", "1", "0")


def test_mturk_sheets_approve_and_reject_per_assignment_with_a_bonus_list(app, runner, tmp_path):
    result = run(runner, "payments", "--platform", "mturk", "--output", tmp_path / "pay")
    assert "5 mturk workers: 2 approve, 1 review, 1 screen out, 1 return, 0 open" in result.output
    pay = tmp_path / "pay"
    assert (pay / "mturk-batch-results.csv").read_text() == (
        "HITId,AssignmentId,WorkerId,Approve,Reject\n"
        "H1,A1,MGOOD,x,\n"
        "H2,A2,MGOOD,x,\n"
        "H1,A3,MTRAIN,,Did not pass the training required before the task.\n"
    )
    bonuses = decisions((pay / "mturk-bonuses.csv").read_text())
    assert [(b["WorkerId"], b["AssignmentId"], b["BonusAmount"]) for b in bonuses] == [
        ("MGOOD", "A1", "0.10"), ("MGOOD", "A2", "0.50")]  # fmt: skip
    assert len({b["UniqueRequestToken"] for b in bonuses}) == 2
    rows = decisions((pay / "decisions.csv").read_text())
    assert {r["assignment_id"]: (r["worker_id"], r["decision"], r["bonus_paid_now"])
            for r in rows} == MTURK  # fmt: skip


def test_one_role_at_a_time_and_the_downloads_are_the_same_sheets(
    app, runner, tmp_path, researcher_client
):
    run(runner, "payments", "--platform", "prolific", "--output", tmp_path / "pay",
        "--role", "validator")  # fmt: skip
    assert (tmp_path / "pay" / "prolific-bulk-approve.txt").read_text() == "PVAL1\n"
    for platform in ("prolific", "mturk"):
        run(runner, "payments", "--platform", platform, "--output", tmp_path / platform)
        response = researcher_client.get(f"/research/export/payments-{platform}.zip")
        assert response.status_code == 200
        archive = zipfile.ZipFile(io.BytesIO(response.get_data()))
        for name in archive.namelist():
            folder, file = name.split("/")
            assert folder == f"payments-{platform}"
            assert archive.read(name) == (tmp_path / platform / file).read_bytes(), name


def test_a_bonus_in_another_currency_than_usd_is_refused_for_mturk(
    app, runner, tmp_path, researcher_client
):
    path = tmp_path / "gbp.yaml"
    path.write_text((tmp_path / "bonus.yaml").read_text().replace("USD", "GBP"), "utf-8")
    use_taxonomy(app, path)
    result = runner.invoke(args=["payments", "--platform", "mturk", "--output", str(tmp_path)])
    assert result.exit_code == 1
    assert "bonus.currency: MTurk pays bonuses in USD" in result.output
    response = researcher_client.get("/research/export/payments-mturk.zip")
    assert response.status_code == 409
    assert "MTurk pays bonuses in USD" in response.get_data(as_text=True)


def test_a_prolific_worker_in_both_roles_is_written_per_role(app, runner, tmp_path):
    round_ = db.session.scalar(select(ValidationRound))
    worker = db.session.scalar(select(Annotator).filter_by(external_id="PGOOD2"))
    db.session.add(ValidationSession(round_id=round_.id, annotator_id=worker.id,
                                     status="submitted", platform="prolific"))  # fmt: skip
    db.session.commit()
    result = runner.invoke(args=["payments", "--platform", "prolific", "--output", str(tmp_path)])
    assert result.exit_code == 1
    assert "worker PGOOD2 is both an annotator and a validator" in result.output
    assert not (tmp_path / "decisions.csv").exists()
    run(runner, "payments", "--platform", "prolific", "--output", tmp_path, "--role", "validator")
    assert (
        tmp_path / "prolific-bulk-approve.txt"
    ).read_text() == "PVAL1\nPGOOD2\n"  # in session order
