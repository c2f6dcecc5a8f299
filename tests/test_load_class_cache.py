"""CDL109 and a class's own cache: a method loads what a method of the same class saved, at a path made
from the instance's attributes, and what it saved holds no module's state (processed data, an id
table). A checkpoint the class saves (`state_dict()`, directly or through a local name; a Module
instance), a file at a path the caller passes (Series.load), a path made from a parameter (`root`),
one only some of whose bindings are cache files, and a load in a function of no class are still
reported. A path is followed through a loop over `zip(...)` of the object's paths and through each
binding of a local name."""

from conftest import findings_of, triples

SOURCE = '''
import os.path as osp

import torch
from torch import nn


class Cached:
    def __init__(self, root):
        self.root = root
        self.data, self.slices = torch.load(self.processed_paths[0])
        f = osp.join(self.root, "pre_transform.pt")
        if torch.load(f) != repr(self.pre_transform):
            pass
        self.ids = torch.load(self.root + "/ids.pt")
        self.model = torch.load(self.checkpoint)

    def process(self, data_list):
        torch.save(self.collate(data_list), self.processed_paths[0])
        path = osp.join(self.root, "pre_transform.pt")
        torch.save(repr(self.pre_transform), path)
        torch.save(self.model.state_dict(), self.checkpoint)
        state = {"model": self.model.state_dict(), "epoch": 1}
        torch.save(state, self.root + "/ids.pt")


class Net(nn.Module):
    def save(self, path):
        torch.save(self, path)

    @classmethod
    def load(cls, path):
        return torch.load(path)


class Series:
    def save(self, fname):
        torch.save(self, fname)

    @classmethod
    def load(cls, fname):
        return torch.load(fname)


def load_elsewhere(path):
    return torch.load(path)


class Processed:
    def __init__(self, root, train):
        idx = 0 if train else 1
        self.data = torch.load(self.processed_paths[idx])
        f = osp.join(self.root, "pre_filter.pt")
        if torch.load(f) != repr(self.pre_filter):
            pass
        f = osp.join(self.root, "pre_transform.pt")
        if torch.load(f) != repr(self.pre_transform):
            pass
        g = osp.join(root, "pre_filter.pt")
        self.seen = torch.load(g)

    def process(self, lists):
        it = zip(self.raw_paths, self.processed_paths)
        for raw_path, processed_path in it:
            torch.save(self.collate(lists[raw_path]), processed_path)
        path = osp.join(self.root, "pre_transform.pt")
        torch.save(repr(self.pre_transform), path)
        path = osp.join(self.root, "pre_filter.pt")
        torch.save(repr(self.pre_filter), path)


class Subset:
    def __init__(self):
        ids_path = self.annotations.replace("json", "pth")
        self.ids = torch.load(ids_path) if osp.exists(ids_path) else self._create(ids_path)

    def _create(self, ids_path):
        ids = [1, 2]
        torch.save(ids, ids_path)
        return ids
'''


def test_a_class_reading_back_its_own_cache():
    assert triples(findings_of(SOURCE.lstrip("\n"), select={"CDL109"})) == [
        ("CDL109", 14, 20),
        ("CDL109", 15, 22),
        ("CDL109", 32, 16),
        ("CDL109", 41, 16),
        ("CDL109", 45, 12),
        ("CDL109", 59, 21),
    ]


def test_a_cache_path_made_through_a_local_name_of_the_objects_own_attributes():
    # matgl's MGLDataset: `root = Path(self.root)` in both save() and load(); a root the caller hands
    # over (a parameter) is no object path.
    source = '''from pathlib import Path

import torch


class Graphs:
    def save(self):
        root = Path(self.root)
        torch.save(self.graphs, root / self.filename)

    def load(self):
        root = Path(self.root)
        self.graphs = torch.load(root / self.filename)

    def load_from(self, where):
        root = Path(where)
        return torch.load(root / self.filename)
'''
    assert triples(findings_of(source, select={"CDL109"})) == [("CDL109", 17, 16)]
