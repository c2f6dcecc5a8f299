"""A configuration object's attribute that the project's classes bind only to a CUDA query guards its
readers, whatever object holds it (ProjectIndex.attribute_guard): ColBERT's settings class binds
`total_visible_gpus = torch.cuda.device_count()`, and the index and search classes of other modules read
`config.total_visible_gpus > 0` into `self.use_gpu`, so their `if self.use_gpu: x = x.cuda()` run only
where CUDA is. A name the project also binds to something else, or an attribute the file's own class binds,
is not read so."""

from conftest import findings_of, triples

SETTINGS = '''import torch
from dataclasses import dataclass


@dataclass
class RunSettings:
    total_visible_gpus = torch.cuda.device_count()
    rank: int = 0


class Flags:
    def __init__(self):
        self.cuda_ready = torch.cuda.is_available()
        self.shared = torch.cuda.is_available()
'''

OTHER = '''class Options:
    def __init__(self, shared):
        self.shared = shared
'''

CODEC = '''import torch


class ResidualCodec:
    def __init__(self, config, centroids):
        self.use_gpu = config.total_visible_gpus > 0
        if self.use_gpu:
            self.centroids = centroids.cuda().half()
        if config.cuda_ready:
            self.bits = torch.arange(8).cuda()
        if config.shared:
            self.other = centroids.cuda()
        if config.rank > 0:
            self.rank = centroids.cuda()


def encode(settings, batch):
    if settings.total_visible_gpus:
        return batch.cuda()
    return batch
'''


def test_attributes_bound_only_to_cuda_queries_guard_their_readers():
    files = {"colbert/__init__.py": "", "colbert/settings.py": SETTINGS, "colbert/options.py": OTHER}
    found = findings_of(CODEC, path="colbert/codec.py", select={"CDL102"}, project_files=files)
    # `shared` is also bound to a parameter in options.py, `rank` to 0: both still reported
    assert triples(found) == [("CDL102", 12, 36), ("CDL102", 14, 35)]


def test_without_the_settings_module_the_flag_is_unknown():
    found = findings_of(CODEC, path="colbert/codec.py", select={"CDL102"},
                        project_files={"colbert/__init__.py": "", "colbert/options.py": OTHER})
    assert triples(found) == [("CDL102", 8, 40), ("CDL102", 10, 41), ("CDL102", 12, 36), ("CDL102", 14, 35),
                              ("CDL102", 19, 22)]
