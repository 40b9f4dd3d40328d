"""Without torch (the packaged app, or a pip install without [torch]) a PyTorch SPEC says which extra to
install, in one line with exit code 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BLOCK_TORCH = "import sys; sys.modules['torch'] = None; from advisor.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("command", ["estimate", "recommend"])
@pytest.mark.parametrize("spec", ["MODEL.py", "torchvision:resnet18"])
def test_torch_specs_name_the_extra(tmp_path: Path, command: str, spec: str) -> None:
    model = tmp_path / "MODEL.py"
    model.write_text("import torch\n\ndef build_model():\n    return torch.nn.Linear(2, 2)\n")
    target = str(model) if spec == "MODEL.py" else spec
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_TORCH, command, target], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"advisor {command}: error: {target}: needs the torch package (install gpu-advisor[torch])"
    ]


def test_self_check_reports_torch_missing_without_failing() -> None:
    from advisor import selfcheck

    lines: list[str] = []

    class Out:
        def write(self, text: str) -> int:
            lines.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    modules = dict(sys.modules)
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        report = selfcheck.Report(Out())  # type: ignore[arg-type]
        selfcheck.report_optional(report)
    finally:
        sys.modules.clear()
        sys.modules.update(modules)
    text = "".join(lines)
    assert "info torch        not installed: PyTorch models" in text and "pip install gpu-advisor[torch]" in text
    assert report.failed == []
