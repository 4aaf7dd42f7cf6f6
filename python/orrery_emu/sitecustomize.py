"""Loaded by `orrery emulate` into every Python process of an emulated run (through PYTHONPATH).

It installs the PyTorch hook (orrery_emu_hook.py) when the process runs under the emulation
libraries and PyTorch is installed, then chains to any other sitecustomize on the path, so the
user's own one still runs.
"""
import importlib.util
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        path = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_orrery_chained_sitecustomize", path)
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


if os.environ.get("ORRERY_EMU_DIR") and os.environ.get("ORRERY_EMU_TORCH_HOOK", "1") != "0":
    try:
        import orrery_emu_hook

        orrery_emu_hook.install()
    except ImportError:
        pass
_chain()
