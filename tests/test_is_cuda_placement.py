"""CDL103 and `is_cuda` deciding a placement: `if model_param.is_cuda: batch = batch.cuda()` (or the
flag kept in a local name first) stands for "is on the accelerator": beside a tensor on MPS the values
stay on the CPU, and the next operation mixes devices. A test whose branch moves nothing to CUDA is a
guard with a working other branch, and a tensor the test already finds on CUDA moved between CUDA
devices is no placement from the host."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def evaluate(model, batch, labels):
    use_cuda = next(model.parameters()).is_cuda
    if use_cuda:
        batch = batch.cuda()
    if labels.is_cuda:
        batch = batch.to("cuda")
    return model(batch), labels


def guard(x):
    on_gpu = x.is_cuda
    if on_gpu:
        torch.cuda.synchronize()
    if x.is_cuda:
        return x.sum()
    return x.mean()


def between_devices(y, bias):
    if y.is_cuda and bias.is_cuda and y.get_device() != bias.get_device():
        y = y.cuda(bias.get_device())
    return y + bias
'''


def test_is_cuda_deciding_a_move_to_cuda_is_reported():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL103"}))
    assert found == [("CDL103", 5, 16), ("CDL103", 8, 8)]


def test_is_cuda_as_a_copy_flag_is_the_safe_choice():
    # rf-detr's postprocess: device-to-host copies are asynchronous only from CUDA; from MPS they block.
    source = textwrap.dedent('''
    def to_host(boxes, scores, keep):
        is_cuda = boxes.is_cuda
        boxes_cpu = boxes.float().to("cpu", non_blocking=is_cuda)
        scores_cpu = scores.to("cpu", non_blocking=scores.is_cuda)
        flag = keep.is_cuda
        return boxes_cpu, scores_cpu, flag
    import torch  # the module imports torch (CDL103 reads `.is_cuda` only there)
    ''').lstrip("\n")
    assert triples(findings_of(source, select={"CDL103"})) == [("CDL103", 5, 12)]


def test_is_cuda_beside_an_mps_test_asks_for_any_accelerator():
    # pylate's late-interaction backend: CUDA or MPS tensors take the kernel path.
    source = textwrap.dedent('''
    import torch

    def on_accelerator(tensors):
        return all(t.is_cuda or t.device.type == "mps" for t in tensors)

    def on_gpu(t):
        return t.is_cuda or t.is_sparse
    ''').lstrip("\n")
    assert triples(findings_of(source, select={"CDL103"})) == [("CDL103", 7, 12)]


def test_any_tensor_on_cuda_kept_in_a_name_that_only_chooses_a_kernel():
    # ring-attention-pytorch: `any_cuda_inputs` sends CUDA inputs to the CUDA kernel, others (MPS too)
    # to the portable path; kept in a name that is also returned, it is reported as before.
    source = textwrap.dedent('''
    def attend(q, k, v, use_kernel):
        any_cuda_inputs = any([t.is_cuda for t in (q, k, v)])
        if any_cuda_inputs and use_kernel:
            return kernel(q, k, v)
        return portable(q, k, v)

    def flags(q, k):
        all_cuda = all(t.is_cuda for t in (q, k))
        return all_cuda
    import torch  # the module imports torch (CDL103 reads `.is_cuda` only there)
    ''').lstrip("\n")
    assert triples(findings_of(source, select={"CDL103"})) == [("CDL103", 8, 20)]
