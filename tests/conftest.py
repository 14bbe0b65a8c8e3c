"""Fixtures of the command-line tests: verdict tables, ``bayesjudge.cli.main`` in-process.

Used by test_cli.py, test_cli_fit.py, test_cli_hostile.py and test_study_cli.py.
"""

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import main


def _write_tables(folder, *, n_test: int, n_label: int, judge: str, human: str):
    """Write test.csv and cal.csv to ``folder`` and return their paths (seed 42).

    Two systems, alpha (θ = 0.35) and beta (θ = 0.7), in column ``model``; one judge with
    specificity 0.7 and sensitivity 0.9 gives yes/no verdicts in column ``judge``: ``n_test``
    test items per system, ``n_label`` truly incorrect and ``n_label`` truly correct calibration
    items per system, their human labels (0/1) in column ``human``.
    """
    rng = np.random.default_rng(42)
    rows, cal = [], []
    for system, theta in (("alpha", 0.35), ("beta", 0.7)):
        truth = rng.random(n_test) < theta
        verdict = np.where(truth, rng.random(n_test) < 0.9, rng.random(n_test) > 0.7)
        rows.append(pd.DataFrame({"model": system, judge: np.where(verdict, "yes", "no")}))
        labels = np.repeat([0, 1], n_label)
        n_cal = 2 * n_label
        verdicts = np.where(labels == 1, rng.random(n_cal) < 0.9, rng.random(n_cal) > 0.7)
        cal.append(
            pd.DataFrame({"model": system, judge: np.where(verdicts, "yes", "no"), human: labels})
        )
    test_csv, cal_csv = folder / "test.csv", folder / "cal.csv"
    pd.concat(rows).to_csv(test_csv, index=False)
    pd.concat(cal).to_csv(cal_csv, index=False)
    return test_csv, cal_csv


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """(test, calibration) CSV paths, columns model, verdict and gold, shared by a module.

    600 test items and 80 + 80 calibration items per system; read them, do not change them.
    """
    folder = tmp_path_factory.mktemp("tables")
    return _write_tables(folder, n_test=600, n_label=80, judge="verdict", human="gold")


@pytest.fixture
def default_tables(tmp_path):
    """(test, calibration) CSV paths as str in ``tmp_path``, the default column names.

    Columns model, judge and human (the defaults of ``--judge`` and ``--human``); 300 test
    items and 60 + 60 calibration items per system. The test may change or remove them.
    """
    test_csv, cal_csv = _write_tables(
        tmp_path, n_test=300, n_label=60, judge="judge", human="human"
    )
    return str(test_csv), str(cal_csv)


@pytest.fixture
def run_cli(capsys):
    """Return ``run(args) -> (exit status, stdout, stderr)`` of ``bayesjudge.cli.main``."""

    def run(args):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse's own errors exit here
            code = exc.code
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def one_error_line():
    """Return ``check(err) -> line``: stderr is one ``bayesjudge: error:`` line, no traceback."""

    def check(err: str) -> str:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, err
        assert lines[0].startswith("bayesjudge: error:"), err
        assert "Traceback" not in err
        return lines[0]

    return check
