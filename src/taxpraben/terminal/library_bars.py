"""The libraries' own progress bars, off: transformers' ("Loading weights", checkpoint shards)
and huggingface_hub's ("Fetching files", downloads) tqdm bars would otherwise print between
taxpraben's own lines, on the terminal and in every log. A model being loaded is said by the
command itself; a download that takes long is visible in the hub's cache directory."""

from __future__ import annotations


def silence_library_bars() -> None:
    """Turn transformers' and huggingface_hub's progress bars off for this process (before a
    model or tokenizer is loaded; each library keeps the setting)."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    try:
        from huggingface_hub import disable_progress_bars
    except ImportError:  # an older hub client: transformers' switch covers its own bars
        return
    disable_progress_bars()
