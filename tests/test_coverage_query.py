"""`cudalint coverage QUERY`: the status table of an API or an ATen operator across releases."""

from conftest import run_cli

RELEASES = "1.13    2.0    2.1    2.2    2.3    2.4    2.5    2.6    2.7    2.8    2.9   2.10   2.11   2.12   2.13   2.14"


def test_api_table_names_its_operators_and_first_release():
    result = run_cli("coverage", "F.grid_sample")
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        "torch.nn.functional.grid_sample: MPS coverage as of torch 2.15 (the release marked *)",
        "",
        f"operator                 {RELEASES}  2.15*",
        "aten::grid_sampler_2d       E      N      N      N      N      N      N      N      N      N      N      N      N      N      N      N      N",
        "aten::grid_sampler_3d       E      E      E      E      E      E      E      E      E      E      N      N      N      N      N      N      N",
        "",
        "  E  not implemented (NotImplementedError, or CPU with PYTORCH_ENABLE_MPS_FALLBACK=1)",
        "  N  native MPS kernel",
        "",
        "runs on MPS from torch 2.9",
    ]


def test_operator_query_with_a_target_release():
    result = run_cli("coverage", "aten::grid_sampler_3d", "--torch-version", "2.3")
    lines = result.stdout.splitlines()
    assert lines[0] == "aten::grid_sampler_3d: MPS coverage as of torch 2.3 (the release marked *)"
    assert lines[2].split()[5] == "2.3*"
    assert lines[-1] == "runs on MPS from torch 2.9"


def test_unknown_query_is_a_usage_error():
    result = run_cli("coverage", "no_such_api")
    assert result.returncode == 2
    assert "'no_such_api' is neither a torch API in the mapping nor an ATen operator" in result.stderr
