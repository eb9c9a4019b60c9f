"""A PyTorch-native data path: a TrainingStream as a torch.utils.data.IterableDataset.

    stream = suite.training_stream(entry="flipflop", seed=0)
    loader = torch.utils.data.DataLoader(stream.torch_dataset(), batch_size=None, num_workers=2)
    for b in loader:            # the trainer's batches, in its order, as torch tensors
        logits = model(b["tokens"].long())
        loss = F.cross_entropy(logits[b["loss_mask"]], b["targets"][b["loss_mask"]].long())

Each item is one whole batch (the trainer's train.batch examples), so the DataLoader takes
batch_size=None. With W workers, worker w draws steps w, w + W, w + 2W, …; the DataLoader takes one
item from each worker in turn, so it yields steps 0, 1, 2, … — the same batches in the same order
as with no workers. Needs torch (Debian's python3-torch).
"""
import torch
from torch.utils.data import IterableDataset, get_worker_info


def to_torch(batch):
    """A Batch as a dict of torch tensors: tokens, targets (int32 [B, T]; targets −1 where not
    scored), lengths, input_lengths (int32 [B]), mask and loss_mask (bool [B, T])."""
    return {"tokens": torch.from_numpy(batch.tokens), "targets": torch.from_numpy(batch.targets),
            "lengths": torch.from_numpy(batch.lengths), "input_lengths": torch.from_numpy(batch.input_lengths),
            "mask": torch.from_numpy(batch.mask), "loss_mask": torch.from_numpy(batch.loss_mask)}


class TrainingDataset(IterableDataset):
    """The batches of a srbench.TrainingStream, sharded across DataLoader workers by step."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream

    def __len__(self):
        return len(self.stream)

    def __iter__(self):
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        for step in range(worker, len(self.stream), workers):
            yield to_torch(self.stream.batch(step))
