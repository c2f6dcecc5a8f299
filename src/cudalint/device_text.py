"""How device names and device settings are spelled, wherever cudalint reads them: Python code, and
configuration files (YAML) that hold the same settings. No libcst here: the manifest readers use it."""

from __future__ import annotations

import re

CUDA_DEVICE_RE = re.compile(r"^cuda(:\d+)?$")  # "cuda", "cuda:1"
DEVICE_KEY_RE = re.compile(r"(^|_)device$", re.IGNORECASE)  # config keys: "device", "eval_device"
