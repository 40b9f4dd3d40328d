"""advisor.core must import with Qt, torch, SQLAlchemy, NVML and matplotlib unavailable."""

import pkgutil
import subprocess
import sys

import advisor.core

BLOCKED = ("PySide6", "torch", "sqlalchemy", "pynvml", "matplotlib", "onnx", "safetensors")

SCRIPT = f"""
import importlib, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {BLOCKED!r}:
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
for name in sys.argv[1:]:
    importlib.import_module(name)
print('ok')
"""


def core_modules() -> list[str]:
    return ["advisor.core"] + [m.name for m in pkgutil.walk_packages(advisor.core.__path__, "advisor.core.")]


def test_core_imports_without_heavy_dependencies() -> None:
    modules = core_modules()
    assert "advisor.core.memory" in modules and "advisor.core.ops.conv" in modules
    result = subprocess.run([sys.executable, "-c", SCRIPT, *modules], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_blocker_really_blocks() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT, "sqlalchemy"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "blocked: sqlalchemy" in result.stderr
