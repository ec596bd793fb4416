"""benchmarks/draw_report.py: per-family figures of a draw's bench rows (headroom rows, optimized among them,
recovered share by time and in log space), counted on constructed rows."""
import json
import math
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import draw_report  # noqa: E402

VARIANTS = {"seed": 7, "problems": [{"file": "level1/00_a.py", "family": "pools"},
                                    {"file": "level1/01_b.py", "family": "pools"},
                                    {"file": "level1/02_c.py", "family": "scans"},
                                    {"file": "level1/03_d.py", "family": "scans"}]}


def row(name, base, floor, speedup, status="optimized", correct=True):
    return {"name": name, "status": status, "correct": correct, "measured": True, "speedup": speedup,
            "compiled": {"device_ms": base}, "floor_ms": floor}


def test_families_count_headroom_rows_and_what_was_recovered():
    rows = [row("00_a", 4.0, 1.0, 2.0), row("01_b", 1.1, 1.0, 1.0, "fallback"), row("02_c", 3.0, 1.0, 1.0, "fallback")]
    rep = draw_report.report(VARIANTS, rows)
    pools, scans = rep["families"]["pools"], rep["families"]["scans"]
    assert pools["headroom_rows"] == 1 and pools["optimized_of_headroom"] == 1  # 01_b: 1.1x, below the 1.2x bar
    assert math.isclose(pools["recovered_time"], (4.0 - 2.0) / (4.0 - 1.0))
    assert math.isclose(pools["recovered_log"], math.log(2.0) / math.log(4.0))
    assert math.isclose(pools["geomean"], math.sqrt(2.0))
    assert scans["headroom_rows"] == 1 and scans["optimized_of_headroom"] == 0 and scans["recovered_time"] == 0
    assert math.isclose(rep["all"]["recovered_time"], 2.0 / (3.0 + 2.0))
    assert rep["missing"] == ["03_d"]
    assert rep["all"]["wrong"] == 0 and rep["all"]["slower"] == 0
    bad = draw_report.report(VARIANTS, [row("00_a", 2.0, 1.0, 0.9, correct=False)])
    assert bad["all"]["wrong"] == 1 and bad["all"]["slower"] == 1
    assert "| pools | 1 | 1 | 1 | 0.90x | 2.00x |" in draw_report.markdown(bad)
    # The ceiling: every row at its floor (01_b's 1.1x counts too; a row under its floor counts 1.0x).
    assert math.isclose(rep["all"]["ceiling"], (4.0 * 1.1 * 3.0) ** (1 / 3))


def test_a_suite_run_by_level(tmp_path):
    rows = [dict(row("a", 4.0, 1.0, 2.0), level=2), dict(row("b", 1.0, 1.1, 1.0, "fallback"), level=2),
            dict(row("c", 3.0, 1.0, 1.5), level=3)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "draw_report.py"), "--levels",
                        str(tmp_path / "r.jsonl"), "--markdown"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "| level 2 | 2 | 1 | 1 | 1.41x | 2.00x |" in r.stdout and "| level 3 | 1 | 1 | 1 | 1.50x | 3.00x |" in r.stdout


def test_rows_of_another_draw_and_unreadable_files_are_clear_errors(tmp_path):
    (tmp_path / "v.json").write_text(json.dumps(VARIANTS))
    (tmp_path / "r.jsonl").write_text(json.dumps(row("09_z", 2.0, 1.0, 1.5)) + "\n")
    script = str(ROOT / "benchmarks" / "draw_report.py")
    r = subprocess.run([sys.executable, script, str(tmp_path / "v.json"), str(tmp_path / "r.jsonl")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "not a problem of this draw" in r.stderr
    r = subprocess.run([sys.executable, script, str(tmp_path / "missing.json"), str(tmp_path / "r.jsonl")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("draw_report: error:") and r.stderr.count("\n") == 1
