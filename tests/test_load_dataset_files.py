"""CDL109 and a dataset's own files: a method of a dataset (a class with `__getitem__` and `__len__`,
or one derived from torch's, PyG's or DGL's dataset classes) that loads a file under its own root (a path
built from an attribute of `self`, directly or through a local name) reads the CPU data a DataLoader
hands out: not reported. A path the caller hands in, a class that is no dataset, and a load in a plain
function still are."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import os.path as osp

import torch
from torch_geometric.data import InMemoryDataset


class LinkDataset(object):
    def __init__(self, root):
        self.root = root

    def get_edge_split(self, split_type=None):
        path = osp.join(self.root, "split", split_type or "time")
        train = torch.load(osp.join(path, "train.pt"))
        return train, torch.load(osp.join(path, "valid.pt"))

    def load_extractor(self, checkpoint):
        return torch.load(checkpoint)

    def __getitem__(self, idx):
        return idx

    def __len__(self):
        return 1


class GraphDataset(InMemoryDataset):
    def get_idx_split(self):
        return torch.load(osp.join(self.root, "split_dict.pt"))


class Trainer:
    def resume(self):
        return torch.load(osp.join(self.root, "last.ckpt"))


def load(root):
    return torch.load(osp.join(root, "train.pt"))
'''


def test_a_dataset_loading_files_under_its_root_is_not_reported():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL109"}))
    # 17: a path its caller hands it; 33: no dataset; 37: no class
    assert found == [("CDL109", 17, 16), ("CDL109", 33, 16), ("CDL109", 37, 12)]
