"""Property-based: on generated programs with CUDA code spliced in, fixing never crashes,
always yields code that parses, and fixing twice equals fixing once."""

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_fix_outputs import DEFAULT

from cudalint.fixes import fix_text

SNIPPETS = [
    'x = torch.ones(2).to("cuda")\n',
    "y = x.cuda()\n",
    "torch.cuda.synchronize()\n",
    'device = "cuda" if torch.cuda.is_available() else "cpu"\n',
    "scaler = torch.cuda.amp.GradScaler()\n",
    "state = torch.load(path)\n",
    'with torch.autocast("cuda"):\n    pass\n',
    "loader = DataLoader(data, pin_memory=True)\n",
    "torch.cuda.manual_seed_all(0)\n",
]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    program=hypothesmith.from_grammar(),
    spliced=st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=4),
    version=st.sampled_from(["2.3", "2.6", "2.13"]),
)
def test_fix_is_total_parses_and_idempotent(program, spliced, version):
    source = "import torch\n" + "".join(spliced) + program + ("\n" if program and not program.endswith("\n") else "")
    once = fix_text("generated.py", source, DEFAULT, version, unsafe=True)
    if once.error is not None:
        assert once.fixed == source  # refused: nothing changes
        return
    compile(once.fixed, "fixed.py", "exec")
    twice = fix_text("generated.py", once.fixed, DEFAULT, version, unsafe=True)
    assert twice.error is None
    assert twice.fixed == once.fixed
