"""CDL114 and PyTorch Lightning 1.x's `gpus=`: with no accelerator given, a non-zero `gpus` is
`accelerator="cuda"` (pytorch_lightning/trainer/connectors/accelerator_connector.py maps it so), which
raises on a Mac; Lightning 2 removed the argument. `gpus=0`, `gpus="0"` and a call that names its
accelerator are not reported."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import pytorch_lightning as pl

GPUS = 2


def main(args, model):
    pl.Trainer(gpus=1, max_epochs=3).fit(model)
    pl.Trainer.from_argparse_args(args, gpus=GPUS)
    pl.Trainer(gpus=-1)
    pl.Trainer(gpus="0,1")
    pl.Trainer(gpus=0)
    pl.Trainer(gpus="0")
    pl.Trainer(accelerator="gpu", gpus=1)
'''


def test_gpus_asks_lightning_1_for_cuda():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL114"}))
    assert found == [("CDL114", 3, 8), ("CDL114", 7, 16), ("CDL114", 9, 16), ("CDL114", 10, 16)]
