"""Exact (code, line, column) on the fixtures: every rule family, name resolution, precision."""

from conftest import FIXTURES, findings_of, triples


def lint_fixture(relative, **options):
    return triples(findings_of((FIXTURES / relative).read_text(encoding="utf-8"), path=relative, **options))


def test_demo_training_script():
    assert lint_fixture("demo/train.py") == [
        ("CDL205", 9, 1),  # from torch.cuda.amp import GradScaler, autocast (both used below)
        ("CDL106", 12, 12),  # CUDA_VISIBLE_DEVICES
        ("CDL308", 13, 12),  # PYTORCH_CUDA_ALLOC_CONF
        ("CDL101", 15, 10),  # DEVICE = "cuda", reported at the binding
        ("CDL108", 20, 45),  # add_argument(default="cuda:0")
        ("CDL301", 28, 67),  # pin_memory=True
        ("CDL701", 33, 33),  # init_process_group("nccl")
        ("CDL209", 34, 5),  # cudnn.deterministic
        ("CDL203", 35, 5),  # torch.cuda.manual_seed_all
        ("CDL102", 36, 75),  # .cuda()
        ("CDL205", 38, 14),  # GradScaler from torch.cuda.amp
        ("CDL304", 40, 34),  # non_blocking=True
        ("CDL304", 41, 26),
        ("CDL205", 42, 14),  # autocast from torch.cuda.amp
        ("CDL201", 48, 5),  # torch.cuda.synchronize
        ("CDL202", 49, 26),  # torch.cuda.max_memory_allocated
        ("CDL109", 55, 27),  # torch.load without map_location
    ]


def test_portable_code_has_no_findings():
    assert lint_fixture("demo/portable.py") == []


def test_precision_no_findings_for_guards_mentions_and_portable_selection():
    assert lint_fixture("python/precision.py") == []


def test_names_resolve_through_every_import_form():
    assert lint_fixture("python/aliases.py") == [
        ("CDL201", 9, 1),  # tc.synchronize()  (import torch.cuda as tc)
        ("CDL202", 10, 1),  # cuda.empty_cache()  (from torch import cuda)
        ("CDL205", 11, 1),  # amp.GradScaler()  (from torch.cuda import amp)
        ("CDL201", 12, 1),  # sync()  (from torch.cuda import synchronize as sync)
        ("CDL209", 13, 1),  # cudnn.deterministic  (import torch.backends.cudnn as cudnn)
        ("CDL203", 14, 1),  # T.cuda.manual_seed  (import torch as T)
        ("CDL101", 15, 23),  # device="cuda:1"
        ("CDL101", 16, 14),  # T.device(f"cuda:{x}")
        ("CDL207", 19, 11),  # @autocast("cuda", enabled=False)
        ("CDL205", 24, 2),  # @T.cuda.amp.autocast()
        ("CDL305", 30, 9),  # tc.Stream()
        ("CDL305", 31, 10),  # with tc.stream(s):
        ("CDL306", 32, 17),  # T.cuda.Event
    ]


def test_idioms():
    assert lint_fixture("python/idioms.py") == [
        ("CDL101", 7, 7),  # GPU = "cuda:0" reaches x.to(GPU) later
        ("CDL104", 8, 10),  # "cuda" if is_available() else "cpu"
        ("CDL107", 16, 12),  # "cuda" if device.type == "cuda" else "cpu"
        ("CDL104", 20, 5),  # the same as an if/else statement
        ("CDL112", 28, 5),  # assert torch.cuda.is_available()
        ("CDL112", 30, 5),  # else: raise
        ("CDL112", 36, 5),  # cuda/xpu chain with no MPS or CPU branch
        ("CDL111", 43, 21),  # mps.is_built() alone
        ("CDL216", 47, 18),  # float(torch.version.cuda)
        ("CDL108", 51, 19),  # device: str = "cuda" in a class
        ("CDL402", 54, 7),  # load_inline(cuda_sources=...)
        ("CDL702", 55, 23),  # NCCL_DEBUG
        ("CDL217", 56, 4),  # CUDA_MPS_PIPE_DIRECTORY
        ("CDL217", 57, 21),  # nvidia-cuda-mps-control
        ("CDL704", 58, 49),  # mode="reduce-overhead"
        ("CDL208", 59, 1),  # set_autocast_enabled(True)
        ("CDL103", 60, 5),  # .is_cuda as a value
        ("CDL602", 60, 24),  # .double() (of data the file does not show: on the device, perhaps)
    ]


def test_end_positions_and_messages():
    [finding] = findings_of('import torch\nx = torch.ones(2).to("cuda:0")\n')
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (2, 22, 2, 30)
    assert finding.message == 'device "cuda:0" is CUDA-only; choose the device at run time'


def test_default_off_rule_needs_selection():
    text = "import torch\ntorch.backends.cudnn.benchmark = True\n"
    assert triples(findings_of(text, select={"CDL210"})) == [("CDL210", 2, 1)]
    from cudalint.catalog import load_catalog

    default = {rule.code for rule in load_catalog() if rule.default}
    assert "CDL210" not in default
    assert findings_of(text, select=default) == []


def test_version_aware_rule_depends_on_target():
    text = "import torch\nopt = torch.optim.Adam([], fused=True)\n"
    assert triples(findings_of(text, torch_version="2.4")) == [("CDL705", 2, 28)]
    assert findings_of(text, torch_version="2.5") == []


def test_binding_reported_once_for_many_uses():
    text = 'import torch\nDEV = "cuda"\na = torch.ones(1).to(DEV)\nb = torch.zeros(1, device=DEV)\n'
    assert triples(findings_of(text)) == [("CDL101", 2, 7)]


def test_binding_used_only_outside_device_arguments_is_not_reported():
    assert findings_of('NAME = "cuda"\nprint(NAME)\n') == []


def test_early_return_guard_covers_rest_of_function():
    text = (
        "import torch\n"
        "def f():\n"
        "    if not torch.cuda.is_available():\n"
        "        return\n"
        "    torch.cuda.synchronize()\n"
        "torch.cuda.synchronize()\n"
    )
    assert triples(findings_of(text)) == [("CDL201", 6, 1)]


def test_unguarded_import_reported_guarded_not():
    text = "import triton\ntry:\n    import cupy\nexcept ImportError:\n    cupy = None\nfrom flash_attn import flash_attn_func\nfrom numba import cuda\n"
    assert triples(findings_of(text)) == [("CDL404", 1, 1), ("CDL404", 6, 1)]  # numba.cuda imports anywhere Numba does


def test_every_file_is_walked_once(monkeypatch):
    """No check walks the tree on its own: one Walker per file, and libcst's rebuilding
    traversal never runs (positions come from one code generation, only when there are findings)."""
    import libcst

    from cudalint.python import analyze
    from cudalint.python.visitor import Walker

    walkers, visits = [], []
    original_init, original_visit = Walker.__init__, libcst.Module.visit

    def counting_init(self, *args):
        walkers.append(self)
        original_init(self, *args)

    def counting_visit(self, visitor):
        visits.append(type(visitor).__name__)
        return original_visit(self, visitor)

    monkeypatch.setattr(Walker, "__init__", counting_init)
    monkeypatch.setattr(libcst.Module, "visit", counting_visit)
    analyze.checks_for.cache_clear()
    assert findings_of((FIXTURES / "demo" / "train.py").read_text(encoding="utf-8"))
    assert (len(walkers), visits) == (1, [])
    walkers.clear()
    visits.clear()
    assert findings_of('import torch\nx = 1  # cuda in a comment only\n"""and in a string"""\n') == []
    assert (len(walkers), visits) == (0, [])  # the CPython tree shows nothing to check: no libcst parse
    assert findings_of('import torch\nx = torch.ones(1)\nprint("on cuda")\n') == []
    assert (len(walkers), visits) == (0, [])  # "cuda" inside a sentence is no device: no libcst parse
    assert findings_of('import torch\nx = torch.ones(1)\nname = "cuda"\nprint(name)\n') == []
    assert (len(walkers), visits) == (1, [])  # a string that is "cuda" could be a device: parsed and checked


def test_selection_with_nested_blocks_and_one_line_suites():
    """A compound statement inside a branch (found by the ecosystem run on deepspeed) and `else: x = ...`."""
    nested = (
        "import torch\n"
        "if torch.cuda.is_available():\n"
        '    name = "cuda"\n'
        "else:\n"
        "    if verbose:\n"
        '        print("no cuda")\n'
        '    name = "cpu"\n'
    )
    assert triples(findings_of(nested)) == [("CDL104", 2, 1)]
    one_line = 'import torch\nif torch.cuda.is_available(): name = "cuda"\nelse: name = "cpu"\n'
    assert triples(findings_of(one_line)) == [("CDL104", 2, 1)]


def test_the_deprecated_has_cuda_attribute_is_a_build_query_and_a_guard():
    # torch/__init__.py answers `torch.has_cuda` with torch.backends.cuda.is_built(): False on every Mac,
    # so the CUDA arm below it never runs there (no CDL101) and the test itself forgets MPS.
    text = (
        "import torch\n"
        "def pick():\n"
        "    if torch.has_cuda:\n"
        "        device = 'cuda'\n"
        "    else:\n"
        "        device = 'cpu'\n"
        "    if torch.has_cudnn:\n"
        "        torch.cuda.synchronize()\n"
        "    return device\n"
    )
    assert triples(findings_of(text, torch_version="2.9.1")) == [("CDL104", 3, 5), ("CDL215", 3, 8)]


def test_a_handler_that_goes_on_only_after_cudas_out_of_memory_is_no_fallback():
    # s3prl's training step: the handler skips the batch only for CUDA's allocator text and re-raises
    # anything else, so on a Mac the step has no other way and its CUDA-only calls are reported. A
    # handler that goes on for any error is a fallback, but not for CUDA autocast, which never raises
    # off CUDA (it warns and casts nothing: test_try_fallback.py).
    text = (
        "import torch\n"
        "def train(batches, model, amp):\n"
        "    for batch in batches:\n"
        "        try:\n"
        "            with torch.cuda.amp.autocast(enabled=amp):\n"
        "                model(batch)\n"
        "        except RuntimeError as e:\n"
        "            if 'CUDA out of memory' in str(e):\n"
        "                continue\n"
        "            else:\n"
        "                raise\n"
        "def probe(model):\n"
        "    try:\n"
        "        with torch.cuda.amp.autocast():\n"
        "            model(1)\n"
        "    except Exception:\n"
        "        return False\n"
    )
    assert triples(findings_of(text, torch_version="2.9.1", select={"CDL205", "CDL218"})) == [
        ("CDL205", 5, 18), ("CDL218", 8, 16), ("CDL205", 14, 14),
    ]


def test_cuda_amp_turned_off_on_every_mac_does_nothing_there():
    # recbole's trainer: `enable_scaler` needs torch.cuda.is_available(), so the scaler (and an autocast
    # given the same flag positionally) is off on a Mac; an option a Mac user may turn on stays reported.
    text = (
        "import torch\n"
        "from torch.cuda import amp\n"
        "class Trainer:\n"
        "    def __init__(self, config):\n"
        "        self.enable_scaler = torch.cuda.is_available() and config['enable_scaler']\n"
        "    def fit(self, model, x, fp16):\n"
        "        scaler = amp.GradScaler(enabled=self.enable_scaler)\n"
        "        with torch.cuda.amp.autocast(self.enable_scaler):\n"
        "            y = model(x)\n"
        "        other = amp.GradScaler(2.0 ** 16, 2.0, 0.5, 2000, torch.cuda.is_available())\n"
        "        with amp.autocast(enabled=fp16):\n"
        "            y = model(x)\n"
        "        return scaler, other, y\n"
    )
    assert triples(findings_of(text, torch_version="2.9.1", select={"CDL205"})) == [("CDL205", 11, 14)]
