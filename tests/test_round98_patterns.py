"""What blind round 98 (pythae, rllte-core) showed, beyond the device flow across modules
(test_device_flow.py) and NumPy's float64 scalars (test_float64_numpy_scalars.py)."""

from conftest import findings_of


def test_nvml_bindings_are_described_by_what_they_read_not_by_kernels():
    # pynvml has no kernels: it reads NVIDIA's management library, which a Mac has no driver for
    found = findings_of("pynvml==11.5.0\ngpustat\n", path="requirements.txt", kind="requirements", select={"CDL504"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL504", 1, 1), ("CDL504", 2, 1)]
    assert found[0].message == (
        "`pynvml` installs without CUDA, but it reads NVIDIA's management library (NVML), which needs an NVIDIA "
        "driver: its calls fail on a Mac; consider torch.accelerator memory statistics and psutil for host memory")
