"""CUDA-event timing shared by the device scripts (imported from beside them): device work is
asynchronous, so a region is timed between two recorded events, after warm-ups, as a median."""
import statistics

import torch


def event_pair():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def elapsed_ms(fn, start, stop):
    """Milliseconds of the device work `fn` queues, between `start` and `stop`."""
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop)


def median_ms(fn, warmup, iters):
    """Median of `iters` timed calls of `fn` after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = event_pair()
    return statistics.median(elapsed_ms(fn, start, stop) for _ in range(iters))
