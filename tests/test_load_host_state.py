"""CDL109 where what a load reads holds no device storage by construction: the state of a learning-rate
scheduler or gradient scaler the function made (their state dicts are Python numbers), and a function's
own cache of what it computes (`if exists: x = torch.load(p)` / `else: x = make(); torch.save(x, p)`).
An optimizer's state, a scheduler of unknown origin, and a checkpoint saved or resumed in two arms of an
`if` (`model.state_dict()`) are still reported."""

from conftest import findings_of, triples

SCHEDULERS = '''import os

import torch
from torch.optim.lr_scheduler import LambdaLR
from transformers import get_linear_schedule_with_warmup


def train(model, optimizer, args, sched):
    if args.warmup:
        scheduler = get_linear_schedule_with_warmup(optimizer, 10, 100)
    else:
        scheduler = LambdaLR(optimizer, lambda step: 1.0)
    scaler = torch.amp.GradScaler("cuda")
    optimizer.load_state_dict(torch.load(os.path.join(args.model_name, "optimizer.pt")))
    scheduler.load_state_dict(torch.load(os.path.join(args.model_name, "scheduler.pt")))
    scaler.load_state_dict(torch.load("scaler.pt"))
    sched.load_state_dict(torch.load("sched.pt"))
    state = torch.load("scheduler.pt")
    scheduler.load_state_dict(state)
'''


def test_scheduler_and_scaler_states_hold_numbers():
    found = findings_of(SCHEDULERS, select={"CDL109"})
    assert triples(found) == [("CDL109", 14, 31), ("CDL109", 17, 27), ("CDL109", 18, 13)]


CACHES = '''import os

import torch


def load_and_cache_examples(examples, cached_features_file, args):
    if os.path.exists(cached_features_file) and not args.reprocess_input_data:
        features = torch.load(cached_features_file, weights_only=False)
    else:
        features = convert_examples_to_features(examples)
        torch.save(features, cached_features_file)
    return features


def squad_features(examples, cached_features_file):
    if os.path.exists(cached_features_file):
        features = torch.load(cached_features_file)
    else:
        features, dataset = squad_convert_examples_to_features(examples)
        torch.save(features, cached_features_file)
    return features


def save_or_resume(model, path, if_save):
    if if_save:
        state = model.state_dict()
        torch.save(state, path)
    elif os.path.exists(path):
        state = torch.load(path)
        model.load_state_dict(state)


def resume_other_name(model, path):
    if os.path.exists(path):
        checkpoint = torch.load(path)
    else:
        torch.save(model, path)


def cache_of_a_parameter(data, path):
    if os.path.exists(path):
        data = torch.load(path)
    else:
        torch.save(data, path)
    return data


def save_or_load_history(buffer, path, if_save):
    if if_save:
        item = buffer[:10]
        torch.save(item, path)
    elif os.path.isfile(path):
        item = torch.load(path)
    return item
'''


def test_a_functions_own_cache_is_read_where_it_was_made():
    found = findings_of(CACHES, select={"CDL109"})
    assert triples(found) == [("CDL109", 29, 17), ("CDL109", 35, 22), ("CDL109", 42, 16), ("CDL109", 53, 16)]
