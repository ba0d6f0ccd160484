"""Local compute for models and scorers: the devices a model runs on (``devices.py``) and batches
sized by a memory budget that back off on out-of-memory (``batches.py``)."""
