"""tools/baseline_in_process.py: a problem's capture and baseline through the worker's own request
handler in one process, and a failed request's whole traceback (CPU mode here, as on the GPU)."""

import os
import subprocess
import sys

from conftest import ROOT


def _run(problem, out):
    env = dict(os.environ, KERNELOPT_DEVICE="cpu", TRITON_INTERPRET="1", PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, str(ROOT / "tools/baseline_in_process.py"), str(problem), str(out)],
                          capture_output=True, text=True, timeout=600, env=env)


def test_a_problem_is_captured_and_its_baseline_run(tmp_path):
    r = _run(ROOT / "examples/problems/softmax_lastdim.py", tmp_path / "b")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("capture ") and '"match": true' in r.stdout, r.stdout
    assert (tmp_path / "b" / "meta.json").exists()


def test_a_failed_request_prints_its_traceback(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
                   "def get_inputs():\n    raise RuntimeError('no inputs on purpose')\n\n\ndef get_init_inputs():\n"
                   "    return []\n")
    r = _run(bad, tmp_path / "b")
    assert r.returncode == 1 and "capture failed" in r.stderr and "Traceback" in r.stderr, r.stderr
    assert "no inputs on purpose" in r.stderr
