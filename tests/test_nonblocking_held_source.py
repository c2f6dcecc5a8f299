"""CDL304 and a source held until the function waits: a host-to-device `.to(...)`/`.cuda()` whose
source stays referenced for the whole call (a parameter, an entry or attribute of one or of `self`, a
name bound only from those or to copies of itself) is not reported when a later statement of the
function's own body reads a value back on the host (`.item()`, `.cpu()`, `.numpy()`, `.tolist()`) or
synchronizes: MPS has one queue, so the copy lands before the caller can drop the source."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def train_step(self, batch):
    data = batch["data"]
    target = batch["target"]
    data = data.to(self.device, non_blocking=True)
    if isinstance(target, list):
        target = [t.to(self.device, non_blocking=True) for t in target]
    else:
        target = target.to(self.device, non_blocking=True)
    target = target[0]
    loss = self.loss(self.network(data), target)
    return {"loss": loss.detach().cpu().numpy()}


def no_wait(self, batch):
    data = batch["data"].to(self.device, non_blocking=True)
    return self.network(data)


def replaced(self, batch):
    batch["img"] = batch["img"].to(self.device, non_blocking=True).float() / 255
    return self.loss(batch).item()


def from_a_loop(self, loader):
    for images in loader:
        images = images.to(self.device, non_blocking=True)
        print(self.network(images).sum().item())


def a_temporary(self, array):
    moved = torch.from_numpy(array).to(self.device, non_blocking=True)
    return moved.sum().item()


def waited_in_a_branch(self, batch, log):
    data = batch["data"].to(self.device, non_blocking=True)
    if log:
        print(data.sum().item())
    return data


def to_the_host(self, batch):
    result = batch["out"].to("cpu", non_blocking=True)
    return result.numpy()
'''


def test_a_source_held_until_the_function_reads_back_is_not_reported():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL304"}, torch_version="2.9.1"))
    # no_wait: nothing reads back; replaced: the statement drops the source's only reference; from_a_loop:
    # the next turn rebinds it; a_temporary: nothing holds it; waited_in_a_branch: the read may not run;
    # to_the_host: a copy to the CPU is read there, and must land first
    assert found == [
        ("CDL304", 18, 42),
        ("CDL304", 23, 49),
        ("CDL304", 29, 41),
        ("CDL304", 34, 53),
        ("CDL304", 39, 42),
        ("CDL304", 46, 37),
    ]
