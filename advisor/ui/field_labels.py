"""What the builder calls each layer field: a human label with its unit, and a tooltip saying what it means
(the netfile's identifiers, e.g. `out_features` or `inplace_`, stay in the saved .json, not on screen)."""

from __future__ import annotations

from advisor.ui.i18n import tr

# field -> (label, tooltip), in English; tr() translates both where they are shown
FIELDS: dict[str, tuple[str, str]] = {
    "affine": ("Learnable scale and shift", "Whether the normalisation has trainable weight and bias"),
    "approximate": ("Approximation", "GELU formula: exact (erf) or the tanh approximation"),
    "bias": ("Bias", "Whether the layer adds a trainable bias"),
    "bidirectional": ("Both directions", "Runs the sequence forwards and backwards (doubles the output)"),
    "causal": ("Causal mask", "Each token attends only to earlier tokens (decoders)"),
    "ceil_mode": ("Round output size up", "Output size rounded up instead of down"),
    "dilation": ("Dilation (pixels)", "Spacing between kernel taps"),
    "dim": ("Dimension", "Which dimension of one sample (0 = first after the batch)"),
    "dims": ("Spatial dimensions", "1 for sequences, 2 for images, 3 for volumes"),
    "dropout": ("Dropout rate", "Fraction of attention weights zeroed while training (0 to 1)"),
    "dtype": ("Data type", "float for images and features, int64 for token ids"),
    "embedding_dim": ("Embedding size", "Numbers per token"),
    "groups": ("Groups", "Channels split into this many independent groups"),
    "heads": ("Attention heads", "Number of query heads"),
    "height": ("Height (patches)", "Height of the patch grid"),
    "hidden_size": ("Hidden size", "Numbers in the recurrent state per direction"),
    "index": ("Index", "Which output of the layer above"),
    "inplace_": ("In place", "Overwrites its input instead of allocating an output (saves memory)"),
    "keep_dim": ("Keep the dimension", "Whether the sliced dimension stays (size 1)"),
    "kernel": ("Kernel size (pixels)", "Width (and height) of the window"),
    "kv_heads": ("Key/value heads", "Fewer than the query heads for grouped-query attention; 0: as many"),
    "num_embeddings": ("Vocabulary size", "Number of distinct tokens"),
    "num_layers": ("Stacked layers", "Recurrent layers stacked on each other"),
    "out_channels": ("Output channels", "Feature maps the convolution produces"),
    "out_features": ("Output features", "Numbers each sample has after this layer"),
    "output_padding": ("Output padding (pixels)", "Extra size added to one side of the output"),
    "output_size": ("Output size (pixels)", "Height and width after pooling"),
    "p": ("Drop probability", "Fraction dropped while training (0 to 1)"),
    "pad_h": ("Padding, height (pixels)", "Rows added at the top and bottom"),
    "pad_w": ("Padding, width (pixels)", "Columns added left and right"),
    "padding": ("Padding (pixels)", "Zeros added around the input"),
    "shape": ("Shape of one sample", "Sizes without the batch, comma separated, e.g. 3, 224, 224"),
    "shift_h": ("Shift, height", "Rows the window is rolled by"),
    "shift_w": ("Shift, width", "Columns the window is rolled by"),
    "shifted": ("Shifted windows", "Swin's shifted-window variant"),
    "start": ("Start", "First index kept"),
    "start_dim": ("First dimension", "Dimensions from here on are flattened into one"),
    "stop": ("Stop", "First index not kept"),
    "stride": ("Stride (pixels)", "Step between windows"),
    "tied_to": ("Shares weights with", "Name of a layer whose weights this one reuses (no new parameters)"),
    "upcast": ("Compute in fp32", "Logits converted to fp32 before the loss (language models)"),
    "width": ("Width (patches)", "Width of the patch grid"),
    "window": ("Window size (patches)", "Side of the attention window"),
}


def field_label(name: str) -> str:
    return tr(FIELDS[name][0]) if name in FIELDS else name


def field_tip(name: str) -> str:
    return tr(FIELDS[name][1]) if name in FIELDS else ""
